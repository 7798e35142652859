// Command sshbench-gosshd is an SSH server made of golang.org/x/crypto/ssh, with github.com/pkg/sftp for SFTP: the
// server library behind Gitea, gitlab-sshd, Teleport and soft-serve, run by sshbench as an embedded target
// (local:gossh) on 127.0.0.1 with keys of its own. It logs in the one client key it is given (publickey only),
// runs `exec` commands with the user's shell as OpenSSH does (`SHELL -c COMMAND`, with SSH_CLIENT and
// SSH_CONNECTION set, so the shell reads what it reads under sshd), serves the `sftp` subsystem, and offers every
// algorithm the library supports. Its channel window is the library's, fixed at 2 MiB. It prints `listening` on
// stderr once it accepts connections, and one line per failed connection.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// server is what every connection shares: the settings and the one authorized key.
type server struct {
	shell, home, user string
	authorized        []byte // the client key's wire form
}

func main() {
	var hostKeys list
	listen := flag.String("listen", "127.0.0.1:0", "address:port to listen on")
	authorized := flag.String("authorized-key", "", "the one public key that may log in (OpenSSH format)")
	shell := flag.String("shell", "/bin/sh", "the shell that runs commands")
	home := flag.String("home", "/", "HOME and working directory of sessions")
	user := flag.String("user", "", "the user sessions run as (this process's own)")
	version := flag.Bool("version", false, "print the x/crypto version and exit")
	flag.Var(&hostKeys, "hostkey", "private host key file (repeatable)")
	flag.Parse()
	if *version {
		fmt.Println(cryptoVersion())
		return
	}
	config, s, err := setup(hostKeys, *authorized, *shell, *home, *user)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sshbench-gosshd:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sshbench-gosshd:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "sshbench-gosshd: listening on", ln.Addr(), "with x/crypto", cryptoVersion())
	for {
		conn, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "sshbench-gosshd: accept:", err)
			continue
		}
		go s.serve(conn, config)
	}
}

// cryptoVersion returns the golang.org/x/crypto version this binary was built with.
func cryptoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "golang.org/x/crypto" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// setup reads the keys and returns the server configuration with every supported algorithm offered.
func setup(hostKeys list, authorized, shell, home, user string) (*ssh.ServerConfig, *server, error) {
	text, err := os.ReadFile(authorized)
	if err != nil {
		return nil, nil, err
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey(text)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", authorized, err)
	}
	s := &server{shell: shell, home: home, user: user, authorized: key.Marshal()}
	supported := ssh.SupportedAlgorithms()
	config := &ssh.ServerConfig{
		Config: ssh.Config{
			KeyExchanges: supported.KeyExchanges,
			Ciphers:      supported.Ciphers,
			MACs:         supported.MACs,
		},
		PublicKeyCallback: s.check,
		ServerVersion:     "SSH-2.0-Go_x/crypto_" + cryptoVersion() + " sshbench-gosshd",
	}
	for _, path := range hostKeys {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		signer, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		config.AddHostKey(signer)
	}
	if len(hostKeys) == 0 {
		return nil, nil, errors.New("no -hostkey given")
	}
	return config, s, nil
}

// check lets in the authorized key alone.
func (s *server) check(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if meta.User() == s.user && bytes.Equal(key.Marshal(), s.authorized) {
		return &ssh.Permissions{}, nil
	}
	return nil, fmt.Errorf("key not authorized for %q", meta.User())
}

// serve runs one connection: its handshake, then its session channels.
func (s *server) serve(conn net.Conn, config *ssh.ServerConfig) {
	defer conn.Close()
	sconn, chans, reqs, err := ssh.NewServerConn(conn, config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sshbench-gosshd: connection from", conn.RemoteAddr(), "failed:", err)
		return
	}
	defer sconn.Close()
	go ssh.DiscardRequests(reqs)
	local, remote := conn.LocalAddr().(*net.TCPAddr), conn.RemoteAddr().(*net.TCPAddr)
	env := []string{
		"HOME=" + s.home, "USER=" + s.user, "LOGNAME=" + s.user, "SHELL=" + s.shell,
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/games",
		fmt.Sprintf("SSH_CLIENT=%s %d %d", remote.IP, remote.Port, local.Port),
		fmt.Sprintf("SSH_CONNECTION=%s %d %s %d", remote.IP, remote.Port, local.IP, local.Port),
	}
	for newCh := range chans {
		if newCh.ChannelType() != "session" {
			newCh.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, requests, err := newCh.Accept()
		if err != nil {
			continue
		}
		go s.session(ch, requests, env)
	}
}

// session answers one session channel's requests: exec, the sftp subsystem, a shell; env and others are refused
// (as sshd without AcceptEnv).
func (s *server) session(ch ssh.Channel, requests <-chan *ssh.Request, env []string) {
	var once sync.Once
	finish := func(status uint32) {
		once.Do(func() {
			ch.CloseWrite()
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			ch.Close()
		})
	}
	for req := range requests {
		switch req.Type {
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			go func() { finish(s.run(ch, []string{s.shell, "-c", payload.Command}, env)) }()
		case "shell":
			req.Reply(true, nil)
			go func() { finish(s.run(ch, []string{s.shell}, env)) }()
		case "subsystem":
			var payload struct{ Name string }
			if ssh.Unmarshal(req.Payload, &payload) != nil || payload.Name != "sftp" {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			go func() {
				srv, err := sftp.NewServer(ch, sftp.WithServerWorkingDirectory(s.home))
				if err != nil {
					finish(1)
					return
				}
				status := uint32(0)
				if err := srv.Serve(); err != nil && !errors.Is(err, io.EOF) {
					status = 1
				}
				finish(status)
			}()
		default:
			if req.WantReply {
				req.Reply(false, nil)
			}
		}
	}
}

// run runs argv with the channel as its stdin, stdout and stderr, and returns its exit status. Its stdin is copied
// by a goroutine of our own: exec's own would keep Wait from returning until the client closes its side.
func (s *server) run(ch ssh.Channel, argv []string, env []string) uint32 {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = s.home, env
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 255
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(ch.Stderr(), "sshbench-gosshd:", err)
		return 127
	}
	go func() {
		io.Copy(stdin, ch)
		stdin.Close()
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return uint32(128 + ws.Signal())
		}
		return uint32(exit.ExitCode())
	}
	if err != nil {
		return 255
	}
	return 0
}
