package lab

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// SizeString formats a payload size: 512B, 1KiB, 1MiB, 1536B.
func SizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// ParseSize parses a payload size: a number of bytes with an optional
// unit, B, KiB (or K, KB) or MiB (or M, MB), binary either way: "512",
// "1KiB", "64k", "1MiB".
func ParseSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1 << 10}, {"mb", 1 << 20}, {"k", 1 << 10}, {"m", 1 << 20}, {"b", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.Atoi(strings.TrimSpace(t))
	if err != nil || n <= 0 || n > 64<<20/mult {
		return 0, fmt.Errorf("payload size %q: want a number of bytes from 1 to 64MiB, with an optional unit (B, KiB, MiB): 512, 1KiB, 1MiB", s)
	}
	return n * mult, nil
}

// ParseSizes parses payload sizes with [ParseSize].
func ParseSizes(ss []string) ([]int, error) {
	var sizes []int
	for _, s := range ss {
		n, err := ParseSize(s)
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// WriteTable writes the report as tables a person reads: the sides, then
// spawn→ready, then one table per measurement, every figure beside its
// ratio to the floor.
func (r *Report) WriteTable(w io.Writer) error {
	m := r.Machine
	fmt.Fprintf(w, "Transport lab: %s/%s, %d CPUs, %s", m.GOOS, m.GOARCH, m.CPUs, m.Go)
	if m.LoadStart != "" {
		fmt.Fprintf(w, ", load %s → %s", m.LoadStart, m.LoadEnd)
	}
	fmt.Fprintf(w, ", %.1fs\n", r.DurationMS/1000)
	fmt.Fprintln(w, "Ratios are to the floor (a hand-written ndjson loop over OS pipes), measured alternately in this run.")
	for _, a := range r.Sides {
		if !a.Available {
			fmt.Fprintf(w, "  %s: not measured: %s\n", a.Name, a.Reason)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(r.Spawn) > 0 {
		fmt.Fprintf(w, "\nspawn → ready (median of %d starts)\n", r.Spawn[0].Samples)
		fmt.Fprintln(tw, "\ttime\t÷floor\t")
		for _, s := range r.Spawn {
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", s.Side, msString(s.P50MS), ratioString(s.Ratio))
		}
		tw.Flush()
	}
	if t := r.StartTen; t != nil {
		fmt.Fprintf(w, "\nsession start, ten eager extensions ÷ ten bare children (exec + initialize), in parallel (median of %d starts)\n", t.Samples)
		fmt.Fprintf(tw, "session\t%s\t\nten bare children\t%s\t\nsession ÷ bare\t%s\t\n", msString(t.SessionMS), msString(t.BareMS), ratioString(t.Ratio))
		tw.Flush()
	}
	for i := 0; i < len(r.Calls); {
		j := i
		for j < len(r.Calls) && r.Calls[j].Mode == r.Calls[i].Mode && r.Calls[j].Size == r.Calls[i].Size && r.Calls[j].Concurrency == r.Calls[i].Concurrency {
			j++
		}
		c := r.Calls[i]
		callers := "1 caller"
		if c.Concurrency > 1 {
			callers = strconv.Itoa(c.Concurrency) + " callers"
		}
		if c.Mode == "idle" {
			fmt.Fprintf(w, "\nidle, %s, one call at a time after a %.0fms pause (%d calls each)\n", SizeString(c.Size), r.Settings.IdleGapMS, c.Calls)
			fmt.Fprintln(tw, "\tp50\tp99\tp50 ÷floor\tp99 ÷floor\t")
			for _, c := range r.Calls[i:j] {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", c.Side, usString(c.P50US), usString(c.P99US), ratioString(c.P50Ratio), ratioString(c.P99Ratio))
			}
		} else {
			fmt.Fprintf(w, "\nhot, %s, %s (%d calls each, %d rounds)\n", SizeString(c.Size), callers, c.Calls, c.Rounds)
			fmt.Fprintln(tw, "\tp50\tp99\tcalls/s\tp50 ÷floor\tp99 ÷floor\tcalls/s ÷floor\t")
			for _, c := range r.Calls[i:j] {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Side, usString(c.P50US), usString(c.P99US), rateString(c.CallsPerSec),
					ratioString(c.P50Ratio), ratioString(c.P99Ratio), ratioString(c.RateRatio))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		i = j
	}
	return r.writeProduct(w)
}

// writeProduct writes the product comparison when the session side ran:
// the host's overhead per call over the bare connection, and the
// session's calls/s against the peers'.
func (r *Report) writeProduct(w io.Writer) error {
	type group struct {
		mode       string
		size, conc int
		rows       map[string]CallResult
	}
	var groups []*group
	for _, c := range r.Calls {
		if len(groups) == 0 || groups[len(groups)-1].mode != c.Mode || groups[len(groups)-1].size != c.Size || groups[len(groups)-1].conc != c.Concurrency {
			groups = append(groups, &group{mode: c.Mode, size: c.Size, conc: c.Concurrency, rows: map[string]CallResult{}})
		}
		groups[len(groups)-1].rows[c.Side] = c
	}
	if len(groups) == 0 {
		return nil
	}
	if _, ok := groups[0].rows[Session]; !ok {
		return nil
	}
	fmt.Fprintln(w, "\nproduct: the session (argument check, hook, trace, scrubbing) against the bare connection and the peers")
	_, split := groups[0].rows[SessionMinimal]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\tsession p50\tbare p50\thost overhead per call\t"
	if split {
		head += "minimal p50\tof it the call path\t"
	}
	fmt.Fprintln(tw, head+"session calls/s\t÷"+GoPluginNetRPC+"\t÷"+MCPSDK+"\t")
	for _, g := range groups {
		s := g.rows[Session]
		line := fmt.Sprintf("%s, %s, %d caller(s)\t%s\t", g.mode, SizeString(g.size), g.conc, usString(s.P50US))
		b, bare := g.rows[Bare]
		if bare {
			line += fmt.Sprintf("%s\t%s\t", usString(b.P50US), usString(s.P50US-b.P50US))
		} else {
			line += "-\t-\t"
		}
		if split {
			m := g.rows[SessionMinimal]
			path := "-"
			if bare {
				path = usString(m.P50US - b.P50US)
			}
			line += fmt.Sprintf("%s\t%s\t", usString(m.P50US), path)
		}
		rate, vsNet, vsMCP := "-", "-", "-"
		if g.mode == "hot" {
			rate = rateString(s.CallsPerSec)
			if p, ok := g.rows[GoPluginNetRPC]; ok && p.RateRatio > 0 {
				vsNet = ratioString(s.RateRatio / p.RateRatio)
			}
			if p, ok := g.rows[MCPSDK]; ok && p.RateRatio > 0 {
				vsMCP = ratioString(s.RateRatio / p.RateRatio)
			}
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t\n", line, rate, vsNet, vsMCP)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "host overhead per call = session p50 − bare p50; session calls/s ÷ a peer's = the median of the per-round ratios to the floor, one ÷ the other.")
	return err
}

func usString(us float64) string {
	if us < 0 { // a difference of two medians
		return "−" + usString(-us)
	}
	switch {
	case us < 1000:
		return fmt.Sprintf("%.1fµs", us)
	case us < 1e6:
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.2fs", us/1e6)
}

func msString(ms float64) string { return usString(ms * 1000) }

func rateString(r float64) string {
	switch {
	case r >= 1e4:
		return fmt.Sprintf("%.0fk", r/1000)
	case r >= 1000:
		return fmt.Sprintf("%.1fk", r/1000)
	}
	return fmt.Sprintf("%.0f", r)
}

func ratioString(r float64) string { return fmt.Sprintf("%.2f×", r) }
