module yolop.dev/registry/cratesio

go 1.26.0

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/gofrs/flock v0.13.2
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-hclog v1.6.3
	github.com/jedisct1/go-minisign v0.0.0-20260527172527-a09352b57a22
	github.com/klauspost/compress v1.20.4
	github.com/pelletier/go-toml/v2 v2.4.3
	go.uber.org/goleak v1.3.0
	golang.org/x/text v0.44.0
	yolop.dev/internal v0.0.0
	yolop.dev/packaging v0.0.0
)

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/crypto v0.52.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	yolop.dev/core v0.0.0 // indirect
)

replace yolop.dev/core => ../../core

replace yolop.dev/internal => ../../internal

replace yolop.dev/packaging => ../../packaging
