// Command plain_gossh is a plain Go program as x/crypto/ssh's users write one: dial, verify the host key against
// known_hosts, log in with a key, run `head -c SIZE /dev/zero` and read it all, timing itself. Nothing of sshbench
// is in it: bench_clients_plain.py holds sshbench's numbers for Go against it (the Python libraries' counterpart is
// plain_clients.py, with the same arguments and the same clock).
//
// Usage: plain_gossh gossh HOST PORT USER KEY KNOWN_HOSTS SIZE [CIPHER] > /dev/null
// Writes what arrives to stdout and prints, on stderr, the steady MB/s: the bytes after the first 20 % (at least
// 8 MiB, at most half) over the time from the moment they had arrived to the last byte.
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// clock writes each chunk to stdout and notes when the untimed start is past and when the last byte came.
type clock struct {
	size, threshold, seen int64
	start, end            time.Time
}

func (c *clock) Write(p []byte) (int, error) {
	n, err := os.Stdout.Write(p)
	before := c.seen
	c.seen += int64(n)
	now := time.Now()
	if before < c.threshold && c.threshold <= c.seen {
		c.start = now
	}
	c.end = now
	return n, err
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func main() {
	a := os.Args[1:] // LIBRARY HOST PORT USER KEY KNOWN_HOSTS SIZE [CIPHER]
	size, err := strconv.ParseInt(a[6], 10, 64)
	must(err)
	check, err := knownhosts.New(a[5])
	must(err)
	pem, err := os.ReadFile(a[4])
	must(err)
	signer, err := ssh.ParsePrivateKey(pem)
	must(err)
	config := &ssh.ClientConfig{User: a[3], Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: check,
		HostKeyAlgorithms: []string{ssh.KeyAlgoED25519}}
	if len(a) > 7 {
		config.Ciphers = []string{a[7]}
	}
	client, err := ssh.Dial("tcp", net.JoinHostPort(a[1], a[2]), config)
	must(err)
	defer client.Close()
	session, err := client.NewSession()
	must(err)
	c := &clock{size: size, threshold: max(size/5, min(8<<20, size/2))}
	session.Stdout = c
	must(session.Run(fmt.Sprintf("head -c %d /dev/zero", size)))
	if c.seen != size {
		must(fmt.Errorf("short read: %d of %d", c.seen, size))
	}
	fmt.Fprintf(os.Stderr, "%.3f\n", float64(size-c.threshold)/c.end.Sub(c.start).Seconds()/1e6)
}
