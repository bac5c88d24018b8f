module yolop.dev/mcp

go 1.26.0

require (
	github.com/gofrs/flock v0.13.2
	github.com/hashicorp/go-hclog v1.6.3
	github.com/modelcontextprotocol/go-sdk v1.8.0
	go.uber.org/goleak v1.3.0
	yolop.dev/core v0.0.0
	yolop.dev/harness v0.0.0
	yolop.dev/internal v0.0.0
	yolop.dev/packaging v0.0.0
	yolop.dev/transport/stdio v0.0.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	github.com/pelletier/go-toml/v2 v2.4.3 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

replace yolop.dev/core => ../core

replace yolop.dev/transport/stdio => ../transport/stdio

replace yolop.dev/packaging => ../packaging

replace yolop.dev/internal => ../internal

replace yolop.dev/harness => ../harness

replace yolop.dev/doctor => ../doctor

replace yolop.dev/registry/git => ../registry/git

replace yolop.dev/registry/cratesio => ../registry/cratesio
