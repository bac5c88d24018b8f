module yolop.dev/extensions/lsp

go 1.26.0

require (
	github.com/hashicorp/go-hclog v1.6.3
	go.uber.org/goleak v1.3.0
	yolop.dev/core v0.0.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/landlock-lsm/go-landlock v0.11.2 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.16.0 // indirect
	kernel.org/pub/linux/libs/security/libcap/psx v1.2.78 // indirect
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	golang.org/x/sys v0.50.0 // indirect
	yolop.dev/internal v0.0.0
	yolop.dev/packaging v0.0.0
	yolop.dev/transport/stdio v0.0.0
)

replace yolop.dev/core => ../../core

replace yolop.dev/transport/stdio => ../../transport/stdio

replace yolop.dev/packaging => ../../packaging

replace yolop.dev/internal => ../../internal
