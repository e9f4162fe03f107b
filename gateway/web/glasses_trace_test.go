package web_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// benchTrace names a file for a DevTools trace of the first card of
// BenchmarkGlassesBudgets/card (its paint and its paging); the benchmark
// then logs where the renderer's time went in those windows.
var benchTrace = flag.String("glasses-trace", "", "BenchmarkGlassesBudgets: write a DevTools trace of the first card to this file and log its split")

// traceCategories are DevTools' timeline categories plus the compositor's,
// raster's and the display compositor's, and the page's user timing marks
// (the windows the summary cuts).
const traceCategories = "devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.frame," +
	"blink.user_timing,toplevel,cc,viz,gpu,benchmark,blink,v8.execute,latencyInfo"

type traceEvent struct {
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Ph   string                     `json:"ph"`
	TS   float64                    `json:"ts"`   // µs
	Dur  float64                    `json:"dur"`  // µs
	TDur float64                    `json:"tdur"` // µs of the thread's CPU
	PID  int                        `json:"pid"`
	TID  int                        `json:"tid"`
	Args map[string]json.RawMessage `json:"args"`
}

// tracer records a DevTools trace over the page's CDP connection: events
// arrive as Tracing.dataCollected while later calls wait for answers.
type tracer struct {
	p       *benchPage
	events  []json.RawMessage
	done    bool
	profile *cpuProfile
	prev    func(string, json.RawMessage) // the page's own event handler, kept
}

// cpuProfile is the part of a DevTools Profiler.Profile the split reads.
type cpuProfile struct {
	Nodes []struct {
		ID        int `json:"id"`
		CallFrame struct {
			FunctionName string `json:"functionName"`
			URL          string `json:"url"`
			LineNumber   int    `json:"lineNumber"`
		} `json:"callFrame"`
	} `json:"nodes"`
	StartTime  float64 `json:"startTime"` // µs, the trace clock
	Samples    []int   `json:"samples"`
	TimeDeltas []int   `json:"timeDeltas"`
}

// scriptSplit tells, for window w, the self time of the functions the
// profiler sampled, largest first.
func (pr *cpuProfile) scriptSplit(w traceWindow) string {
	name := map[int]string{}
	for _, n := range pr.Nodes {
		u := n.CallFrame.URL
		if i := strings.LastIndexByte(u, '/'); i >= 0 {
			u = u[i+1:]
		}
		name[n.ID] = fmt.Sprintf("%s %s:%d", n.CallFrame.FunctionName, u, n.CallFrame.LineNumber+1)
	}
	ms := map[string]float64{}
	t := pr.StartTime
	for i, id := range pr.Samples {
		if i < len(pr.TimeDeltas) {
			t += float64(pr.TimeDeltas[i])
		}
		if t >= w.from && t <= w.to && i+1 < len(pr.TimeDeltas) {
			ms[name[id]] += float64(pr.TimeDeltas[i+1]) / 1000
		}
	}
	var parts []part
	for n, v := range ms {
		parts = append(parts, part{n, v})
	}
	costliestFirst(parts)
	var b strings.Builder
	for i, p := range parts {
		if i == 12 {
			break
		}
		fmt.Fprintf(&b, " %s %.1f;", p.name, p.ms)
	}
	return b.String()
}

func (p *benchPage) startTrace() *tracer {
	tr := &tracer{p: p}
	prev := p.cdp.OnEvent
	tr.prev = prev
	p.cdp.OnEvent = func(method string, params json.RawMessage) {
		if prev != nil {
			prev(method, params)
		}
		switch method {
		case "Tracing.dataCollected":
			var d struct {
				Value []json.RawMessage `json:"value"`
			}
			if json.Unmarshal(params, &d) == nil {
				tr.events = append(tr.events, d.Value...)
			}
		case "Tracing.tracingComplete":
			tr.done = true
		}
	}
	// The sampling profiler alongside: where the script's own time goes.
	p.must(p.cdp.Call(p.ctx, "Profiler.enable", map[string]any{}))
	p.must(p.cdp.Call(p.ctx, "Profiler.setSamplingInterval", map[string]any{"interval": 200}))
	p.must(p.cdp.Call(p.ctx, "Profiler.start", map[string]any{}))
	p.must(p.cdp.Call(p.ctx, "Tracing.start", map[string]any{"transferMode": "ReportEvents",
		"traceConfig": map[string]any{"recordMode": "recordAsMuchAsPossible", "includedCategories": strings.Split(traceCategories, ",")}}))
	return tr
}

// stop ends the trace, writes it to path and returns its events.
func (tr *tracer) stop(path string) []traceEvent {
	p := tr.p
	raw, err := p.cdp.Call(p.ctx, "Profiler.stop", map[string]any{})
	if err != nil {
		p.b.Fatal(err)
	}
	var prof struct {
		Profile cpuProfile `json:"profile"`
	}
	if err := json.Unmarshal(raw, &prof); err != nil {
		p.b.Fatal(err)
	}
	tr.profile = &prof.Profile
	p.must(p.cdp.Call(p.ctx, "Tracing.end", map[string]any{}))
	deadline := time.Now().Add(60 * time.Second)
	for !tr.done && time.Now().Before(deadline) {
		// Events are read while a call waits for its answer.
		p.eval(`new Promise((r) => setTimeout(() => r(true), 100))`, nil)
	}
	p.cdp.OnEvent = tr.prev
	if !tr.done {
		p.b.Fatal("the trace did not complete")
	}
	var buf bytes.Buffer
	buf.WriteString(`{"traceEvents":[`)
	for i, e := range tr.events {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e)
	}
	buf.WriteString("]}\n")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		p.b.Fatal(err)
	}
	out := make([]traceEvent, 0, len(tr.events))
	for _, raw := range tr.events {
		var e traceEvent
		if json.Unmarshal(raw, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// traceWindow is a span of the trace clock, from the page's marks.
type traceWindow struct {
	name     string
	from, to float64 // µs
}

// markWindows finds the windows the page marked as name+"-from" and
// name+"-to" (performance.mark with a startTime).
func markWindows(events []traceEvent, names []string) []traceWindow {
	at := map[string]float64{}
	for _, e := range events {
		if strings.Contains(e.Cat, "blink.user_timing") {
			at[e.Name] = e.TS
		}
	}
	var out []traceWindow
	for _, n := range names {
		from, ok1 := at[n+"-from"]
		to, ok2 := at[n+"-to"]
		if ok1 && ok2 && to > from {
			out = append(out, traceWindow{name: n, from: from, to: to})
		}
	}
	return out
}

// threadClass groups threads the way the split is told: the renderer's
// main thread, its compositor, the workers that raster its tiles (and run
// other pool tasks), the display compositor.
func threadClass(name string) string {
	switch {
	case name == "CrRendererMain":
		return "main"
	case name == "Compositor":
		return "compositor"
	case strings.HasPrefix(name, "CompositorTileWorker"), name == "ThreadPoolForegroundWorker":
		return "workers" // raster tasks (RasterTask) run here
	case name == "VizCompositorThread":
		return "viz"
	case name == "CrGpuMain":
		return "gpu"
	}
	return ""
}

// selfTimes sums, per thread class and event name, the self time (time
// not spent in a nested event) of complete events inside w, in ms.
func selfTimes(events []traceEvent, w traceWindow) map[string]map[string]float64 {
	names := map[[2]int]string{}
	for _, e := range events {
		if e.Ph == "M" && e.Name == "thread_name" {
			var n string
			_ = json.Unmarshal(e.Args["name"], &n)
			names[[2]int{e.PID, e.TID}] = n
		}
	}
	byThread := map[[2]int][]traceEvent{}
	for _, e := range events {
		if e.Ph != "X" || e.Dur <= 0 || e.TS+e.Dur < w.from || e.TS > w.to {
			continue
		}
		k := [2]int{e.PID, e.TID}
		if threadClass(names[k]) != "" {
			byThread[k] = append(byThread[k], e)
		}
	}
	clip := func(a, b float64) float64 { return max(0, min(b, w.to)-max(a, w.from)) }
	out := map[string]map[string]float64{}
	for k, evs := range byThread {
		cls := threadClass(names[k])
		if out[cls] == nil {
			out[cls] = map[string]float64{}
		}
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].TS != evs[j].TS {
				return evs[i].TS < evs[j].TS
			}
			return evs[i].Dur > evs[j].Dur
		})
		// Self time: an event's clipped span less its children's.
		self := make([]float64, len(evs))
		var stack []int
		for i, e := range evs {
			for len(stack) > 0 && evs[stack[len(stack)-1]].TS+evs[stack[len(stack)-1]].Dur <= e.TS {
				stack = stack[:len(stack)-1]
			}
			self[i] = clip(e.TS, e.TS+e.Dur)
			if len(stack) > 0 {
				self[stack[len(stack)-1]] -= self[i]
			}
			stack = append(stack, i)
		}
		for i, e := range evs {
			out[cls][e.Name] += self[i] / 1000
		}
	}
	return out
}

// splitSummary tells one window's split: per thread class its busy time
// and its largest parts.
func splitSummary(events []traceEvent, w traceWindow) string {
	st := selfTimes(events, w)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%.1f ms):", w.name, (w.to-w.from)/1000)
	for _, cls := range []string{"main", "compositor", "workers", "viz", "gpu"} {
		m := st[cls]
		if len(m) == 0 {
			continue
		}
		total := 0.0
		var parts []part
		for n, ms := range m {
			total += ms
			parts = append(parts, part{n, ms})
		}
		costliestFirst(parts)
		fmt.Fprintf(&b, "\n  %s %.1f ms busy:", cls, total)
		for i, p := range parts {
			if i == 8 || p.ms < 0.05 {
				break
			}
			fmt.Fprintf(&b, " %s %.1f;", p.name, p.ms)
		}
	}
	return b.String()
}

// mainCPU is the renderer main thread's CPU time in w, in ms: the thread
// time of its top-level events that start in w (throttling counts: the
// emulated slow CPU is this one kept busy longer).
func mainCPU(events []traceEvent, w traceWindow) float64 {
	main := map[[2]int]bool{}
	for _, e := range events {
		if e.Ph == "M" && e.Name == "thread_name" {
			var n string
			_ = json.Unmarshal(e.Args["name"], &n)
			if n == "CrRendererMain" {
				main[[2]int{e.PID, e.TID}] = true
			}
		}
	}
	var xs []traceEvent
	for _, e := range events {
		if e.Ph == "X" && main[[2]int{e.PID, e.TID}] && e.TS >= w.from && e.TS <= w.to {
			xs = append(xs, e)
		}
	}
	sort.SliceStable(xs, func(i, j int) bool {
		if xs[i].TS != xs[j].TS {
			return xs[i].TS < xs[j].TS
		}
		return xs[i].Dur > xs[j].Dur
	})
	end, cpu := -1.0, 0.0
	for _, e := range xs {
		if e.TS >= end { // top level
			cpu += e.TDur
			end = e.TS + e.Dur
		}
	}
	return cpu / 1000
}

// meanSplit tells the main thread's self time per event name, summed over
// windows ws and divided by their number: what one key press costs, on
// average, and where.
func meanSplit(events []traceEvent, ws []traceWindow) string {
	sum := map[string]float64{}
	for _, w := range ws {
		for n, ms := range selfTimes(events, w)["main"] {
			sum[n] += ms
		}
	}
	var parts []part
	total := 0.0
	for n, ms := range sum {
		parts = append(parts, part{n, ms / float64(len(ws))})
		total += ms / float64(len(ws))
	}
	costliestFirst(parts)
	var b strings.Builder
	fmt.Fprintf(&b, "main %.1f ms busy over %d windows:", total, len(ws))
	for i, p := range parts {
		if i == 14 || p.ms < 0.05 {
			break
		}
		fmt.Fprintf(&b, " %s %.1f;", p.name, p.ms)
	}
	return b.String()
}

// part is one trace event name's time, in ms.
type part struct {
	name string
	ms   float64
}

// costliestFirst sorts parts by time, longest first, then by name.
func costliestFirst(parts []part) {
	slices.SortFunc(parts, func(a, b part) int {
		if c := cmp.Compare(b.ms, a.ms); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
}
