module yolop.dev/packaging

go 1.26.0

require (
	github.com/gofrs/flock v0.13.2
	github.com/google/go-cmp v0.7.0
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.uber.org/goleak v1.3.0
	golang.org/x/text v0.14.0
	yolop.dev/core v0.0.0
)

require github.com/Masterminds/semver/v3 v3.5.0

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	golang.org/x/sys v0.49.0 // indirect
	yolop.dev/internal v0.0.0
)

replace yolop.dev/core => ../core

replace yolop.dev/internal => ../internal
