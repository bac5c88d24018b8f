module yolop.dev/transport/stdio

go 1.26.0

require (
	github.com/hashicorp/go-hclog v1.6.3
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	golang.org/x/time v0.16.0
	yolop.dev/core v0.0.0
)

require (
	github.com/landlock-lsm/go-landlock v0.11.2
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	yolop.dev/internal v0.0.0
)

replace yolop.dev/core => ../../core

replace yolop.dev/internal => ../../internal
