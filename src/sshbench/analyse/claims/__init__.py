"""Every sentence sshbench states about its numbers is made here, as a typed value built from stored evidence.

- `core`: the `Claim` every other module returns (kind, subject, the sentence, the evidence it rests on) and the
  vocabulary fixed for every command (docs/CLAIMS.md): verdict words come from `sshbench.ratios`, bound kinds
  and tolerances from here.
- `fastest`: who leads a result group, who is equivalent, who cannot be told apart yet, who was not measured.
- `bounds`: what bounds a rate (network, tcp-window, ssh-window, client-cpu, server-cpu, crypto, unknown) and
  the remedy, which never names the row's own choice; a ceiling below the rate it caps is a failed ceiling.
- `baselines`: a copy tool's share of the same copy without SSH; a baseline below SSH is a failed baseline.
- `gains`: the change a recommendation promises against what the client uses today, and "keep it".
- `caveats`: what a user should know about a recommendation.
- `collect`: every claim of a stored run, for `--json`, the report and the invariant tests.
The terminal, the report and JSON print these sentences; none of them writes its own.
"""
