# shellcheck shell=bash
# Sourced by scripts/openssh10 and scripts/openssh-build: reading Debian's archive with private lists, as apt does
# (the Release file's signature checked against Debian's archive key, every file's hash against it), without
# touching this machine's own lists, cache or packages. Root is not needed. Needs say() and die() defined.

archive_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

archive_codename() {  # this Debian's release name (bookworm), or die
  local codename
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "/etc/os-release names no release (VERSION_CODENAME): this step is for Debian"
  echo "$codename"
}

archive_mirror_from_sources() {  # the first URI that serves $1 itself, from one-line and deb822 sources
  local codename="$1" f
  {
    sed -n "s/^deb \(\[[^]]*\] \)\{0,1\}\([a-z]*:[^ ]*\) $codename .*/\2/p" /etc/apt/sources.list 2>/dev/null || true
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -r "$f" ] || continue
      awk -v want="$codename" '
        /^[Uu][Rr][Ii][Ss]:/ { uris = $0; sub(/^[^:]*:[ \t]*/, "", uris) }
        /^[Ss]uites:/ { s = " " $0 " "; if (index(s, " " want " ")) hit = 1 }
        /^[ \t]*$/ { if (hit) print uris; hit = 0; uris = "" }
        END { if (hit) print uris }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.list; do
      [ -r "$f" ] || continue
      sed -n "s/^deb \(\[[^]]*\] \)\{0,1\}\([a-z]*:[^ ]*\) $codename .*/\2/p" "$f"
    done
  } | tr ' ' '\n' | awk 'NF && !/security/ && !found { print; found = 1 }'  # reads it all: no SIGPIPE, status 0
}

# archive_open WORK LINE: private apt state under WORK reading the one sources.list LINE ("deb[-src] ... SUITE main");
# sets the array apt_opts and the words archive_from (where the mirror came from) and archive_mirror. Reads the lists.
archive_open() {
  local work="$1" kind="$2" suite="$3" codename
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || die "apt-get and dpkg are needed (Debian)"
  [ -r "$archive_keyring" ] || die "$archive_keyring is missing: install the package debian-archive-keyring"
  codename=$(archive_codename)
  archive_mirror="${SSHBENCH_DEBIAN_MIRROR:-$(archive_mirror_from_sources "$codename")}"
  archive_from="the mirror in this machine's apt sources"
  [ -z "${SSHBENCH_DEBIAN_MIRROR:-}" ] || archive_from="SSHBENCH_DEBIAN_MIRROR"
  [ -n "$archive_mirror" ] \
    || die "no apt source of this machine serves '$codename' (Debian's archive): set SSHBENCH_DEBIAN_MIRROR to a Debian mirror's URL"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
  echo "$kind [signed-by=$archive_keyring] $archive_mirror $suite main" > "$work/sources.list"
  apt_opts=(
    -o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1
    -o APT::Sandbox::User="$(id -un)" -q
  )
  say "reading $suite ($kind) from $archive_from ($archive_mirror)"
  apt-get "${apt_opts[@]}" update >"$work/update.log" 2>&1 || true  # it exits 0 on some failures: the lists say
  if ! compgen -G "$work/lists/*_Packages*" >/dev/null && ! compgen -G "$work/lists/*_Sources*" >/dev/null; then
    die "could not read $suite from $archive_mirror: $(grep -E '^(E|W|Err):' "$work/update.log" | head -n 3 | tr '\n' ' ')"
  fi
}
