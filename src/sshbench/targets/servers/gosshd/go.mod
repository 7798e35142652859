module sshbench/gosshd

go 1.26.0

require (
	github.com/pkg/sftp v1.13.12
	golang.org/x/crypto v0.59.0
)

require (
	github.com/kr/fs v0.1.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
