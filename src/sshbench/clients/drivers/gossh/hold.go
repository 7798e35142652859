package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// held is one open session: its connection and the stdin of its `cat`, which is never written and closed at the end.
type held struct {
	client *ssh.Client
	stdin  io.WriteCloser
}

// openHeld connects from a source address, logs in and starts `cat` in a session whose stdin stays open, so the
// session is held until that stdin is closed; the login must finish within loginLimit, the session has no deadline.
func openHeld(config *ssh.ClientConfig, address, source string) (*held, error) {
	dialer := net.Dialer{Timeout: config.Timeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}}
	conn, err := dialer.Dial("tcp", address)
	if err != nil {
		return nil, err
	}
	if err := conn.SetDeadline(time.Now().Add(loginLimit)); err != nil {
		conn.Close()
		return nil, err
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, address, config)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s->%s: %w", conn.LocalAddr(), address, err)
	}
	client := ssh.NewClient(c, chans, reqs)
	session, err := client.NewSession()
	if err != nil {
		client.Close()
		return nil, err
	}
	stdin, err := session.StdinPipe()
	if err == nil {
		err = session.Start("cat")
	}
	if err == nil {
		err = conn.SetDeadline(time.Time{})
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	return &held{client, stdin}, nil
}

// hold opens sessions and keeps them open: each line of stdin is a count N, and sessions running `cat` are opened
// until N are held, at most operands[1] at a time, from source addresses 127.0.0.(2 + i mod operands[0]); each says
// `hold I STARTED ENDED CPU ok|failed TEXT` (seconds from its line; CPU: this process's so far) and the line ends
// with `held N FAILED`. At the end of stdin every session's stdin is closed, then its connection, and it says
// `closed N`.
func hold(a args) (int, error) {
	sources, parallel := 1, 8
	if len(a.operands) > 0 {
		sources, _ = strconv.Atoi(a.operands[0])
	}
	if len(a.operands) > 1 {
		parallel, _ = strconv.Atoi(a.operands[1])
	}
	config, address, err := clientConfig(a)
	if err != nil {
		return failed, err
	}
	var sessions []*held
	var mu sync.Mutex
	next := 0 // the index of the next session to open, over the whole run
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		want, err := strconv.Atoi(strings.TrimSpace(lines.Text()))
		if err != nil {
			return failed, fmt.Errorf("bad count %q", lines.Text())
		}
		t0 := time.Now()
		gate := make(chan struct{}, max(parallel, 1))
		var wg sync.WaitGroup
		missing := 0
		for n := len(sessions); n < want; n++ {
			gate <- struct{}{}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				defer func() { <-gate }()
				started := time.Since(t0).Seconds()
				h, err := openHeld(config, address, fmt.Sprintf("127.0.0.%d", 2+i%sources))
				ended := time.Since(t0).Seconds()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					missing++
					say("hold %d %.6f %.6f %.6f failed %s", i, started, ended, cpuSeconds(),
						strings.ReplaceAll(err.Error(), "\n", " "))
					return
				}
				sessions = append(sessions, h)
				say("hold %d %.6f %.6f %.6f ok", i, started, ended, cpuSeconds())
			}(next)
			next++
		}
		wg.Wait()
		say("held %d %d", len(sessions), missing)
	}
	for _, h := range sessions {
		h.stdin.Close()
	}
	for _, h := range sessions {
		h.client.Close()
	}
	say("closed %d", len(sessions))
	return 0, lines.Err()
}
