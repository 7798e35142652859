// Command sshbench-gossh drives golang.org/x/crypto/ssh, with github.com/pkg/sftp for SFTP, for `sshbench clients`.
// It takes the command line of the Python drivers and prints their lines (src/sshbench/clients/drivers/common.py):
// `ready`, `authenticated`, `command sent`, `received N`, `copied`, `connection K took S`, `version V`,
// `ciphers A,B`, `macs A,B`, `kex A,B`, `kex-default A,B`, `error: TEXT`, and in soak mode `login ok S` or
// `login failed TEXT` per line of stdin (a key exchange to pin, or `-`), and in load mode `load I STARTED ENDED CPU
// ok|failed TEXT` per login, and in hold mode (hold.go) `hold ...`, `held N FAILED` and `closed N`. The exit status is the remote command's, 255 on a failure.
package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

const (
	prefix     = "sshbench-driver:"
	failed     = 255
	loginLimit = 20 * time.Second // a login under load still running this long is failed
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// args is one invocation: where, how to verify and log in, the algorithms, the setting and what to do.
type args struct {
	host, user, cipher, mac string
	kex, hostkey            string
	port                    int
	keys, knownHosts        list
	tuned                   bool
	mode                    string
	operands                []string
}

// say prints one line for sshbench on stderr.
func say(format string, a ...any) {
	fmt.Fprintf(os.Stderr, prefix+" "+format+"\n", a...)
}

// parse reads the command line: options, then the mode and its operands.
func parse() args {
	var a args
	fs := flag.NewFlagSet("sshbench-gossh", flag.ExitOnError)
	fs.StringVar(&a.host, "host", "127.0.0.1", "host to connect to")
	fs.IntVar(&a.port, "port", 22, "port")
	fs.StringVar(&a.user, "user", "", "user to log in as")
	fs.Var(&a.keys, "key", "identity file (repeatable)")
	fs.Var(&a.knownHosts, "known-hosts", "known_hosts file (repeatable)")
	fs.StringVar(&a.cipher, "cipher", "", "the only cipher to offer")
	fs.StringVar(&a.mac, "mac", "", "the only MAC to offer")
	fs.StringVar(&a.kex, "kex", "", "the only key exchange to offer")
	fs.StringVar(&a.hostkey, "hostkey", "", "the only host key algorithm to accept")
	fs.BoolVar(&a.tuned, "tuned", false, "SFTP puts with concurrent writes")
	_ = fs.Parse(os.Args[1:])
	rest := fs.Args()
	if len(rest) == 0 {
		say("error: no mode given (exec, connect, get, put, version, soak, load or hold)")
		os.Exit(failed)
	}
	a.mode, a.operands = rest[0], rest[1:]
	return a
}

// version returns the Go runtime's and the modules' versions this binary was built with.
func version() string {
	out := []string{"Go " + strings.TrimPrefix(runtime.Version(), "go")}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "golang.org/x/crypto" || dep.Path == "github.com/pkg/sftp" {
				out = append(out, dep.Path+" "+dep.Version)
			}
		}
	}
	return "x/crypto/ssh (" + strings.Join(out, ", ") + ")"
}

// hostKeyAlgorithms returns the host key algorithms known_hosts holds for the address, so that the server is asked
// for a key that can be verified (Go's default order would ask for ed25519 where only an RSA key is known).
func hostKeyAlgorithms(check ssh.HostKeyCallback, address string, files []string) ([]string, error) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	var keyErr *knownhosts.KeyError
	if err := check(address, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}, probe); !errors.As(err, &keyErr) {
		return nil, fmt.Errorf("reading known_hosts: %v", err)
	}
	var algos []string
	for _, k := range keyErr.Want {
		if k.Key.Type() == ssh.KeyAlgoRSA {
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256)
		} else {
			algos = append(algos, k.Key.Type())
		}
	}
	if len(algos) == 0 {
		return nil, fmt.Errorf("no known_hosts line for %s in %s: sshbench never accepts a host key", address,
			strings.Join(files, ", "))
	}
	return algos, nil
}

// signers reads the identity files that parse without a passphrase.
func signers(a args) []ssh.Signer {
	var out []ssh.Signer
	for _, path := range a.keys {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if s, err := ssh.ParsePrivateKey(data); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// clientConfig returns a login's configuration (host key verified against known_hosts, an unknown key refused; the
// keys; the pinned algorithms) and the address to dial.
func clientConfig(a args) (*ssh.ClientConfig, string, error) {
	check, err := knownhosts.New(a.knownHosts...)
	if err != nil {
		return nil, "", err
	}
	address := net.JoinHostPort(a.host, strconv.Itoa(a.port))
	algos, err := hostKeyAlgorithms(check, address, a.knownHosts)
	if err != nil {
		return nil, "", err
	}
	config := &ssh.ClientConfig{
		User:              a.user,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(signers(a)...)},
		HostKeyCallback:   check,
		HostKeyAlgorithms: algos,
		Timeout:           10 * time.Second,
	}
	if a.cipher != "" {
		config.Ciphers = []string{a.cipher}
	}
	if a.mac != "" {
		config.MACs = []string{a.mac}
	}
	if a.kex != "" {
		config.KeyExchanges = []string{a.kex}
	}
	if a.hostkey != "" {
		config.HostKeyAlgorithms = []string{a.hostkey}
	}
	return config, address, nil
}

// connect dials, verifies the host key against known_hosts (an unknown key is refused) and logs in with the keys.
func connect(a args) (*ssh.Client, error) {
	config, address, err := clientConfig(a)
	if err != nil {
		return nil, err
	}
	return ssh.Dial("tcp", address, config)
}

// counting is stdout, counting what the command sent.
type counting struct {
	w io.Writer
	n int64
}

func (c *counting) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// run runs a command with stdin as its input and its output into sink; it returns the command's exit status.
func run(client *ssh.Client, command string, source io.Reader, sink io.Writer) (int, error) {
	session, err := client.NewSession()
	if err != nil {
		return failed, err
	}
	defer session.Close()
	session.Stdin, session.Stdout = source, sink
	err = session.Run(command)
	var exit *ssh.ExitError
	if errors.As(err, &exit) {
		return exit.ExitStatus(), nil
	}
	if err != nil {
		return failed, err
	}
	return 0, nil
}

// connections connects, logs in, runs `true` and closes, operands[0] times, timing each.
func connections(a args) (int, error) {
	count := 1
	if len(a.operands) > 0 {
		count, _ = strconv.Atoi(a.operands[0])
	}
	for i := 1; i <= count; i++ {
		start := time.Now()
		client, err := connect(a)
		if err != nil {
			return failed, err
		}
		status, err := run(client, "true", nil, nil)
		client.Close()
		if err != nil {
			return failed, err
		}
		say("connection %d took %.6f", i, time.Since(start).Seconds())
		if status != 0 {
			return status, nil
		}
	}
	return 0, nil
}

// soak logs in once per line of stdin (`KEX [HOSTKEY]`, each `-` for the package's own choice), runs `true`
// and closes, answering each with `login ok S` or `login failed TEXT`: an interop soak's logins from one process.
func soak(a args) (int, error) {
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		one := a
		words := append(strings.Fields(lines.Text()), "-", "-")
		if words[0] != "-" {
			one.kex = words[0]
		}
		if words[1] != "-" {
			one.hostkey = words[1]
		}
		start := time.Now()
		client, err := connect(one)
		if err != nil {
			say("login failed %s", strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		status, err := run(client, "true", nil, nil)
		client.Close()
		switch {
		case err != nil:
			say("login failed %s", strings.ReplaceAll(err.Error(), "\n", " "))
		case status != 0:
			say("login failed `true` exited with status %d", status)
		default:
			say("login ok %.6f", time.Since(start).Seconds())
		}
	}
	return 0, lines.Err()
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += int64(len(b))
	return len(b), nil
}

// exec is a login's job: `true`, or (up or down above 0) up bytes sent to `cat >/dev/null` and down bytes read back
// from `head -c down /dev/zero`, the count checked.
type exec struct{ up, down int64 }

// command returns the job's remote command (a fixed template of two integers).
func (j exec) command() string {
	if j.up == 0 && j.down == 0 {
		return "true"
	}
	return fmt.Sprintf("cat >/dev/null && head -c %d /dev/zero", j.down)
}

// loginFrom connects from a source address, logs in, runs the job and closes, all within loginLimit.
func loginFrom(config *ssh.ClientConfig, address, source string, job exec) error {
	dialer := net.Dialer{Timeout: config.Timeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	conn, err := dialer.Dial("tcp", address)
	if err != nil {
		return err
	}
	if err := conn.SetDeadline(time.Now().Add(loginLimit)); err != nil {
		conn.Close()
		return err
	}
	// every failure names its source address and port, as Go's network errors do: the server's log names the same
	local := conn.LocalAddr().String()
	from := func(err error) error {
		if strings.Contains(err.Error(), local+"->") {
			return err
		}
		return fmt.Errorf("%s->%s: %w", local, address, err)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, address, config)
	if err != nil {
		conn.Close()
		return from(err)
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	var sent io.Reader
	if job.command() != "true" {
		sent = io.LimitReader(zeros{}, job.up)
	}
	got := &countingWriter{}
	status, err := run(client, job.command(), sent, got)
	if err != nil {
		return from(err)
	}
	if status != 0 {
		return fmt.Errorf("`%s` exited with status %d", job.command(), status)
	}
	if got.n != job.down {
		return fmt.Errorf("short download: %d of %d bytes", got.n, job.down)
	}
	return nil
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// cpuSeconds returns this process's user and system CPU so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// load is an open-loop generator: it reads the intended start offsets (seconds, one per line) until `go`, then
// starts login i at its offset from that moment, each in its own goroutine whatever the others are doing, from
// source address 127.0.0.(2 + i mod operands[0]), each running `true` or, given operands[1] and [2] (bytes up and
// down), an exec job, and says `load I STARTED ENDED CPU ok` or `... failed TEXT` as
// each ends (seconds from `go`; CPU: this process's so far).
func load(a args) (int, error) {
	sources := 1
	if len(a.operands) > 0 {
		sources, _ = strconv.Atoi(a.operands[0])
	}
	var job exec
	if len(a.operands) > 2 {
		job.up, _ = strconv.ParseInt(a.operands[1], 10, 64)
		job.down, _ = strconv.ParseInt(a.operands[2], 10, 64)
	}
	config, address, err := clientConfig(a)
	if err != nil {
		return failed, err
	}
	var offsets []float64
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		text := strings.TrimSpace(lines.Text())
		if text == "go" {
			break
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return failed, fmt.Errorf("bad offset %q", text)
		}
		offsets = append(offsets, v)
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, offset := range offsets {
		time.Sleep(time.Until(t0.Add(time.Duration(offset * float64(time.Second)))))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			started := time.Since(t0).Seconds()
			err := loginFrom(config, address, fmt.Sprintf("127.0.0.%d", 2+i%sources), job)
			ended := time.Since(t0).Seconds()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				say("load %d %.6f %.6f %.6f failed %s", i, started, ended, cpuSeconds(),
					strings.ReplaceAll(err.Error(), "\n", " "))
				return
			}
			say("load %d %.6f %.6f %.6f ok", i, started, ended, cpuSeconds())
		}(i)
	}
	wg.Wait()
	return 0, nil
}

// sftpOptions returns pkg/sftp's options: its defaults (64 requests in flight of 32 KiB, concurrent reads, one
// write at a time), and tuned, concurrent writes as well.
func sftpOptions(a args) []sftp.ClientOption {
	if a.tuned {
		return []sftp.ClientOption{sftp.UseConcurrentWrites(true)}
	}
	return nil
}

// copyFile copies a file with SFTP: get remote local, or put local remote.
func copyFile(client *ssh.Client, a args) error {
	s, err := sftp.NewClient(client, sftpOptions(a)...)
	if err != nil {
		return err
	}
	defer s.Close()
	if a.mode == "get" {
		remote, err := s.Open(a.operands[0])
		if err != nil {
			return err
		}
		defer remote.Close()
		local, err := os.Create(a.operands[1])
		if err != nil {
			return err
		}
		if _, err := remote.WriteTo(local); err != nil {
			local.Close()
			return err
		}
		return local.Close()
	}
	local, err := os.Open(a.operands[0])
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := s.OpenFile(a.operands[1], os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if _, err := remote.ReadFrom(local); err != nil {
		remote.Close()
		return err
	}
	return remote.Close()
}

// work does what the mode asks; it returns the exit status.
func work(a args) (int, error) {
	switch a.mode {
	case "version":
		algos := ssh.SupportedAlgorithms()
		say("version %s", version())
		say("ciphers %s", strings.Join(algos.Ciphers, ","))
		say("macs %s", strings.Join(algos.MACs, ","))
		say("kex %s", strings.Join(algos.KeyExchanges, ",")) // in the package's order of preference
		say("kex-default %s", strings.Join(algos.KeyExchanges, ","))
		return 0, nil
	case "connect":
		return connections(a)
	case "soak":
		return soak(a)
	case "load":
		return load(a)
	case "hold":
		return hold(a)
	case "exec", "get", "put":
	default:
		return failed, fmt.Errorf("unknown mode %q", a.mode)
	}
	client, err := connect(a)
	if err != nil {
		return failed, err
	}
	defer client.Close()
	say("authenticated")
	say("command sent")
	if a.mode == "exec" {
		out := &counting{w: os.Stdout}
		status, err := run(client, a.operands[0], os.Stdin, out)
		say("received %d", out.n)
		return status, err
	}
	if err := copyFile(client, a); err != nil {
		return failed, err
	}
	say("copied")
	return 0, nil
}

func main() {
	a := parse()
	say("ready")
	status, err := work(a)
	if err != nil {
		say("error: %s", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(failed)
	}
	if status < 0 || status > 255 {
		status = failed
	}
	os.Exit(status)
}
