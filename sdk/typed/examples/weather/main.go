// Command yolop-extension-weather is a capability server written with
// typed tools ([yolop.dev/sdk/typed]): the forecast tool's arguments and
// result are Go structs, its JSON Schemas are derived from them, and a
// call whose arguments do not match is refused before the handler runs.
//
// The package manifest sits beside this file as plugin.json; its
// input_schema is the derived schema, printed by
//
//	go run ./sdk/typed/examples/weather -schema
//
// Build the server into the package and grade it with doctor, which fails
// when plugin.json's input_schema and the derived one disagree:
//
//	go build -o sdk/typed/examples/weather/bin/yolop-extension-weather ./sdk/typed/examples/weather
//	yolop ext doctor sdk/typed/examples/weather
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/sdk/typed"
)

// ForecastArgs are the forecast tool's arguments.
type ForecastArgs struct {
	City string `json:"city" jsonschema:"the city to forecast, e.g. Oslo"`
	Days int    `json:"days,omitempty" jsonschema:"how many days ahead, 1 to 7; 3 when absent"`
}

// Forecast is the forecast tool's result: the agent reads its String, and
// the structured value travels as the result's data.
type Forecast struct {
	City string `json:"city"`
	// Highs are the daily highs in degrees Celsius, today first.
	Highs []int `json:"highs"`
}

func (f Forecast) String() string {
	days := make([]string, len(f.Highs))
	for i, h := range f.Highs {
		days[i] = fmt.Sprintf("%d°C", h)
	}
	return fmt.Sprintf("%s: %s", f.City, strings.Join(days, ", "))
}

// forecast makes up a stable forecast from the city's name.
func forecast(_ context.Context, _ *sdk.ToolCall, in ForecastArgs) (Forecast, error) {
	days := in.Days
	if days == 0 {
		days = 3
	}
	if days < 1 || days > 7 {
		return Forecast{}, fmt.Errorf("days is %d; ask for 1 to 7", days)
	}
	base := 0
	for _, r := range in.City {
		base += int(r)
	}
	f := Forecast{City: in.City}
	for i := range days {
		f.Highs = append(f.Highs, base%25+i)
	}
	return f, nil
}

// newServer is the weather server.
func newServer(log hclog.Logger) *sdk.Server {
	s := sdk.NewServer(sdk.Info{Name: "weather", Version: "0.1.0"}, sdk.Options{Logger: log})
	typed.AddTool(s, "forecast", forecast)
	return s
}

func main() {
	schema := flag.Bool("schema", false, "print the forecast tool's derived input schema (plugin.json's input_schema) and exit")
	flag.Parse()
	if *schema {
		raw, err := typed.Schema[ForecastArgs]()
		if err != nil {
			fmt.Fprintln(os.Stderr, "yolop-extension-weather:", err)
			os.Exit(1)
		}
		var b bytes.Buffer
		_ = json.Indent(&b, raw, "", "  ")
		fmt.Println(b.String())
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := hclog.New(&hclog.LoggerOptions{Name: "weather", Output: os.Stderr, Level: hclog.Warn})
	if err := newServer(log).Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "yolop-extension-weather:", err)
		os.Exit(1)
	}
}
