package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"yolop.dev/core"
	"yolop.dev/harness"
	"yolop.dev/harness/config"
	"yolop.dev/harness/fetch"
	"yolop.dev/transport/goplugin"
	"yolop.dev/transport/wasm"
)

// app carries what every subcommand needs; tests build one per run.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            hclog.Logger
	logOut         *logSwitch // log's writer: stderr, or a file under the TUI
	// scrub redacts every stored secret from the log, stdout and stderr,
	// and from what extensions send back (host.ExtensionOptions.Scrub).
	scrub *config.Scrubber
	// h is the harness over the config directory, or why it could not be
	// opened (herr).
	h    *harness.Harness
	herr error
	// ttyOut is stdout when it is a file (it may be a terminal, for the
	// REPL's line editor).
	ttyOut *os.File
	// colour is the --color flag: auto, always or never; colourOn is what
	// it decides, once the flags are parsed.
	colour   string
	colourOn bool
}

// harness returns the harness over the config directory.
func (a *app) harness() (*harness.Harness, error) { return a.h, a.herr }

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	scrub := config.NewScrubber()
	logOut := &logSwitch{w: scrub.Writer(stderr)}
	log, levelErr := harness.NewLogger("yolop", logOut)
	a := &app{
		stdin:  stdin,
		stdout: scrub.Writer(stdout),
		stderr: scrub.Writer(stderr),
		log:    log,
		logOut: logOut,
		scrub:  scrub,
	}
	if levelErr != nil {
		fmt.Fprintf(a.stderr, "yolop: warning: %v\n", levelErr)
	}
	if f, ok := stdout.(*os.File); ok {
		a.ttyOut = f
	}
	// A WASM server runs in-process under wazero; its compiled modules are
	// cached under the config directory.
	wt := wasm.New(wasm.Options{Logger: a.log.Named("wasm"), CacheDir: harness.CacheDir("wasm")})
	defer wt.Close()
	// A go-plugin server is a process started through go-plugin's
	// handshake, with AutoMTLS and its pinned SHA-256 checked first.
	gt := goplugin.New(goplugin.Options{Logger: a.log})
	a.h, a.herr = harness.Open(ctx, harness.Options{
		Transports:   map[string]core.Transport{core.TransportWASM: wt, core.TransportGoPlugin: gt},
		Logger:       a.log,
		Scrubber:     scrub,
		Version:      version,
		AllowFileGit: os.Getenv(allowFileGitEnv) == "1",
		Crate:        fetch.Crate{UserAgent: "yolop/" + version, Progress: a.progress, Notes: a.stderr},
	})
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "yolop ") {
			msg = "yolop: " + msg // a message that names its command needs no prefix
		}
		fmt.Fprintln(a.stderr, msg)
	}
	return harness.ExitStatus(err) // 1, or the code an error carries
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "yolop",
		Short:         "The yolop extension host",
		Long:          "yolop installs, approves, runs and talks to capability servers: extension processes speaking YEP (JSON-RPC 2.0 over stdio).\n\nOn a terminal, yolop with no command runs `yolop session` in the terminal UI.",
		Version:       harness.CurrentBuild(version, commit).String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&a.colour, "color", colourAuto, "colour status words: auto (on a terminal, unless NO_COLOR is set), always or never")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if err := checkColour(a.colour); err != nil {
			return err
		}
		a.colourOn = a.colourful()
		return nil
	}
	// `yolop` alone on a terminal is `yolop session`: the terminal UI
	// over the enabled extensions. Anywhere else it prints the help, as
	// a script that runs it expects.
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(c, args[0])
		}
		if !terminal(a.stdin) || a.ttyOut == nil || !terminal(a.ttyOut) {
			return c.Help()
		}
		return a.runSessionWith(c.Context(), sessionFlags{}, nil, a.stdin, false)
	}
	root.AddCommand(a.sessionCmd(), a.demoCmd(), a.serveEchoCmd(), a.versionCmd(), a.mcpCmd(), a.modelsCmd(), a.serveScriptedModelCmd())
	root.SetVersionTemplate("{{.Version}}")
	for _, c := range a.extraCommands() {
		root.AddCommand(c)
	}
	a.strictTree(root)
	return root
}
