module yolop.dev/harness

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.9.0
	github.com/gofrs/flock v0.13.2
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-hclog v1.6.3
	github.com/knadh/koanf/parsers/toml/v2 v2.1.0
	github.com/knadh/koanf/providers/file v1.2.1
	github.com/knadh/koanf/v2 v2.4.1
	github.com/pelletier/go-toml/v2 v2.4.3
	go.uber.org/goleak v1.3.0
	golang.org/x/tools v0.52.0
	yolop.dev/agent v0.0.0
	yolop.dev/core v0.0.0
	yolop.dev/doctor v0.0.0
	yolop.dev/internal v0.0.0
	yolop.dev/packaging v0.0.0
	yolop.dev/registry/git v0.0.0
	yolop.dev/sdk/python v0.0.0
	yolop.dev/sdk/typescript v0.0.0
	yolop.dev/transport/stdio v0.0.0
)

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/jedisct1/go-minisign v0.0.0-20260527172527-a09352b57a22 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
)

require (
	dario.cat/mergo v1.0.0 // indirect
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/ProtonMail/go-crypto v1.1.6 // indirect
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/cyphar/filepath-securejoin v0.6.1 // indirect
	github.com/emirpasic/gods v1.18.1 // indirect
	github.com/fatih/color v1.13.0 // indirect
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376 // indirect
	github.com/go-git/go-billy/v5 v5.9.2 // indirect
	github.com/go-git/go-git/v5 v5.19.3 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/golang/groupcache v0.0.0-20241129210726-2c02b8208cf8 // indirect
	github.com/jbenet/go-context v0.0.0-20150711004518-d14ea06fba99 // indirect
	github.com/kevinburke/ssh_config v1.2.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.14 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/pjbgf/sha1cd v0.7.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sergi/go-diff v1.3.2-0.20230802210424-5b0b94c5c0d3 // indirect
	github.com/skeema/knownhosts v1.3.1 // indirect
	github.com/xanzy/ssh-agent v0.3.3 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.44.0
	golang.org/x/time v0.16.0 // indirect
	gopkg.in/warnings.v0 v0.1.2 // indirect
	yolop.dev/registry/cratesio v0.0.0
)

replace yolop.dev/core => ../core

replace yolop.dev/packaging => ../packaging

replace yolop.dev/registry/git => ../registry/git

replace yolop.dev/registry/cratesio => ../registry/cratesio

replace yolop.dev/transport/stdio => ../transport/stdio

replace yolop.dev/internal => ../internal

replace yolop.dev/doctor => ../doctor

replace yolop.dev/agent => ../agent

replace yolop.dev/sdk/python => ../sdk/python

replace yolop.dev/sdk/typescript => ../sdk/typescript
