package report

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/ccscope/ccscope/server/internal/debian"
)

// cdp is a minimal Chrome DevTools Protocol client over one page target.
type cdp struct {
	t      *testing.T
	ws     *websocket.Conn
	mu     sync.Mutex
	id     int
	wait   map[int]chan json.RawMessage
	events chan cdpEvent
}

type cdpEvent struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func dialCDP(t *testing.T, url string) *cdp {
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("devtools websocket %s: %v", url, err)
	}
	c := &cdp{t: t, ws: ws, wait: map[int]chan json.RawMessage{}, events: make(chan cdpEvent, 4096)}
	go c.read()
	return c
}

func (c *cdp) read() {
	defer close(c.events)
	for {
		_, msg, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
			cdpEvent
		}
		if json.Unmarshal(msg, &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.wait[m.ID]
			delete(c.wait, m.ID)
			c.mu.Unlock()
			if ch != nil {
				if m.Error != nil {
					ch <- append(json.RawMessage(`{"cdp_error":`), append(m.Error, '}')...)
				} else {
					ch <- m.Result
				}
			}
			continue
		}
		select {
		case c.events <- m.cdpEvent:
		default:
		}
	}
}

// call sends a command and waits for its result.
func (c *cdp) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan json.RawMessage, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
		c.t.Fatalf("cdp %s: %v", method, err)
	}
	select {
	case r := <-ch:
		if strings.HasPrefix(string(r), `{"cdp_error":`) {
			c.t.Fatalf("cdp %s: %s", method, r)
		}
		return r
	case <-time.After(60 * time.Second):
		c.t.Fatalf("cdp %s: no reply in 60 s", method)
	}
	return nil
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func (c *cdp) eval(expr string, out any) {
	c.t.Helper()
	r := c.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(r, &res); err != nil || res.ExceptionDetails != nil {
		c.t.Fatalf("eval %q: %v %s", expr, err, res.ExceptionDetails)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			c.t.Fatalf("eval %q: decode %s: %v", expr, res.Result.Value, err)
		}
	}
}

// startChromium runs headless Chromium with a DevTools port and returns a
// client attached to its first page.
func startChromium(t *testing.T, bin string) *cdp {
	// The profile directory is removed by hand, after the whole browser is
	// gone: with t.TempDir, Chromium's helper processes, which outlive a
	// killed parent, could still be writing to it when the test removed it.
	dir, err := os.MkdirTemp("", "ccscope-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-port=0",
		"--user-data-dir="+dir, "--window-size=1400,1000", "about:blank")
	// Its own process group, so that cancelling kills the helpers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		// A helper may take a moment to die after the group's SIGKILL.
		for i := 0; ; i++ {
			err := os.RemoveAll(dir)
			if err == nil || i == 50 {
				if err != nil {
					t.Logf("profile directory %s not removed: %v", dir, err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	re := regexp.MustCompile(`DevTools listening on (ws://[^\s]+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var browserURL string
	select {
	case browserURL = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("chromium did not print its DevTools URL in 60 s")
	}
	host := strings.TrimPrefix(browserURL, "ws://")
	host = host[:strings.Index(host, "/")]
	var targets []struct {
		Type string `json:"type"`
		URL  string `json:"webSocketDebuggerUrl"`
	}
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		for _, tg := range targets {
			if tg.Type == "page" {
				return dialCDP(t, tg.URL)
			}
		}
		if i == 50 {
			t.Fatalf("no page target in chromium: %v %+v", err, targets)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pageLog is what a page loaded in Chromium logged as errors and fetched
// from the network.
type pageLog struct{ problems, fetched []string }

func (l *pageLog) collect(ev cdpEvent) {
	switch ev.Method {
	case "Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded":
		var p struct {
			Type  string `json:"type"`
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		json.Unmarshal(ev.Params, &p)
		if ev.Method == "Runtime.exceptionThrown" || p.Type == "error" || p.Type == "assert" || p.Entry.Level == "error" {
			l.problems = append(l.problems, ev.Method+": "+string(ev.Params))
		}
	case "Network.requestWillBeSent":
		var p struct {
			Request struct{ URL string } `json:"request"`
		}
		json.Unmarshal(ev.Params, &p)
		if !strings.HasPrefix(p.Request.URL, "file://") && !strings.HasPrefix(p.Request.URL, "data:") {
			l.fetched = append(l.fetched, p.Request.URL)
		}
	}
}

// openPage writes b's page to a file and loads it in Chromium with the
// network cut off, until its script has drawn it.
func openPage(t *testing.T, b *Builder) (*cdp, *pageLog) {
	t.Helper()
	bin := debian.Tool(t, "chromium", "chromium")
	html := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	c := startChromium(t, bin)
	c.call("Runtime.enable", nil)
	c.call("Log.enable", nil)
	c.call("Page.enable", nil)
	c.call("Network.enable", nil)
	c.call("Network.emulateNetworkConditions", map[string]any{"offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false})
	c.call("Page.navigate", map[string]any{"url": "file://" + html})

	l := &pageLog{}
	deadline := time.After(60 * time.Second)
	for loaded := false; !loaded; {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatal("devtools connection closed before the page loaded")
			}
			loaded = ev.Method == "Page.loadEventFired"
			l.collect(ev)
		case <-deadline:
			t.Fatal("the report did not finish loading in 60 s")
		}
	}
	var ready bool
	c.eval("window.ccscopeReady === true", &ready)
	if !ready {
		t.Fatal("the report's script did not finish (window.ccscopeReady unset)")
	}
	return c, l
}

// check drains what arrived meanwhile, then fails t on the errors the
// page logged and what it fetched.
func (l *pageLog) check(t *testing.T, c *cdp) {
	t.Helper()
	for {
		select {
		case ev, ok := <-c.events:
			if ok {
				l.collect(ev)
				continue
			}
		default:
		}
		break
	}
	for _, p := range l.problems {
		t.Errorf("console: %s", p)
	}
	for _, u := range l.fetched {
		t.Errorf("the page fetched %s; a report must be self-contained", u)
	}
}

// panel is what drawnPanels reads of one uPlot chart.
type panel struct {
	ID      string `json:"id"`
	Colored int    `json:"colored"`
	Series  int    `json:"series"`
	Dashed  int    `json:"dashed"`
}

// drawnPanels counts saturated pixels in each plot area (grid lines and
// axes are grey, every series has a colour) and the series drawn dashed.
func drawnPanels(c *cdp) (ps []panel) {
	c.eval(`window.ccscopeCharts.map(u => {
		const b = u.bbox, d = u.ctx.getImageData(b.left, b.top, b.width, b.height).data;
		let n = 0;
		for (let i = 0; i < d.length; i += 4) {
			const mx = Math.max(d[i], d[i+1], d[i+2]), mn = Math.min(d[i], d[i+1], d[i+2]);
			if (d[i+3] > 0 && mx - mn > 60) n++;
		}
		return {id: u.ccscopeId, colored: n, series: u.series.length - 1, dashed: u.series.filter(s => s.dash).length};
	})`, &ps)
	return ps
}

// The report in a real browser: headless Chromium loads the file from disk
// with the network cut off; the page must log no error, fetch nothing,
// draw every panel (coloured pixels inside every plot area), and a zoom
// dragged on one panel must move every other panel to the same range.
func TestReportInChromium(t *testing.T) {
	b := runReport(t, "p-rtr-p", []string{"flows.f0.cc=bbr", "runtime.duration=3s"})
	c, log := openPage(t, b)

	// Every panel drawn.
	drawn := func() []panel { return drawnPanels(c) }
	panels := drawn()
	want := []string{"f0-rates", "f0-inflight", "f0-events", "f0-phase", "f0-cc-phase", "f0-rtt", "q-bottleneck-ab-backlog", "q-bottleneck-ab-sojourn"}
	ids := map[string]bool{}
	for _, p := range panels {
		ids[p.ID] = true
		if p.Colored < 50 {
			t.Errorf("panel %s: %d coloured pixels in its plot area, want a drawn chart (>= 50)", p.ID, p.Colored)
		}
	}
	for _, w := range want {
		if !ids[w] {
			t.Errorf("no panel %s among %d panels", w, len(panels))
		}
	}

	// A names axis (event kinds, CA states) shows its names whole: each
	// fits between the axis' outer edge and its ticks (10 px and a 5 px
	// gap); "recovery_enter" was cut to "ecovery_enter".
	var cut []string
	c.eval(`window.ccscopeCharts.flatMap(u => u.axes.slice(1).filter(a => a.values && a.splits && a.show !== false && a._size).flatMap(a => {
		u.ctx.save(); u.ctx.font = a.font[0];
		const names = a.values(u, a.splits(u)).filter(v => v !== "");
		const out = names.filter(n => u.ctx.measureText(n).width * devicePixelRatio + 15 > a._size * devicePixelRatio).map(n => u.ccscopeId + ": " + n + " (axis " + a._size + " px)");
		u.ctx.restore();
		return out;
	}))`, &cut)
	for _, s := range cut {
		t.Errorf("name cut off on its axis: %s", s)
	}

	// Zoom: drag across the middle of the first panel's plot area.
	var rect struct{ Left, Top, Width, Height float64 }
	c.eval(`(() => { const r = window.ccscopeCharts[0].over.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, height: r.height}; })()`, &rect)
	y := rect.Top + rect.Height/2
	x0, x1 := rect.Left+0.25*rect.Width, rect.Left+0.5*rect.Width
	mouse := func(typ string, x float64, buttons int) {
		c.call("Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})
	}
	mouse("mouseMoved", x0, 0)
	mouse("mousePressed", x0, 1)
	for i := 1; i <= 10; i++ {
		mouse("mouseMoved", x0+(x1-x0)*float64(i)/10, 1)
	}
	mouse("mouseReleased", x1, 0)
	var scales [][2]float64
	c.eval(`window.ccscopeCharts.map(u => [u.scales.x.min, u.scales.x.max])`, &scales)
	full := float64(b.g.w) * float64(b.g.n) / 1e12
	z := scales[0]
	if !(z[0] > 0.1*full && z[1] < 0.7*full && z[1] > z[0]) {
		t.Errorf("after a drag over 25%%–50%% of the first panel its x range is [%g, %g] s, want a zoom inside [0, %g]", z[0], z[1], full)
	}
	for i, s := range scales[1:] {
		if s != z {
			t.Errorf("panel %s x range [%g, %g] s, want the zoomed panel's [%g, %g]", panels[i+1].ID, s[0], s[1], z[0], z[1])
		}
	}

	// Zoomed in, every panel still draws its signals (a level held
	// between two changes included).
	for _, p := range drawn() {
		if p.Colored < 50 {
			t.Errorf("zoomed panel %s: %d coloured pixels in its plot area, want a drawn chart (>= 50)", p.ID, p.Colored)
		}
	}

	// Screenshot of the whole page, for the test log.
	var height float64
	c.eval(`document.documentElement.scrollHeight`, &height)
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1400, "height": int(min(height, 8000)), "deviceScaleFactor": 1, "mobile": false})
	time.Sleep(300 * time.Millisecond)
	r := c.call("Page.captureScreenshot", map[string]any{"format": "png"})
	var shot struct{ Data string }
	json.Unmarshal(r, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) == 0 {
		t.Fatalf("screenshot: %v (%d bytes)", err, len(png))
	}
	dir := os.Getenv("CCSCOPE_SCREENSHOT_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	out := filepath.Join(dir, "ccscope-report-screenshot.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the zoomed report (%d panels): %s", len(panels), out)

	log.check(t, c)
}

// Two runs on one page in a real browser: no error, every panel drawn,
// and the second run's series drawn dashed, as many as the page holds.
func TestBesideInChromium(t *testing.T) {
	a := runReport(t, "p-rtr-p", []string{"runtime.duration=2s"})
	if err := a.Beside(runReport(t, "p-rtr-p", []string{"runtime.duration=2s", "flows.f0.cc=bbr"}), "cubic", "bbr"); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, g := range writePage(t, a).Groups {
		for _, c := range g.Charts {
			for _, s := range c.Series {
				if s.Dash != 0 {
					want++
				}
			}
		}
	}
	c, log := openPage(t, a)
	dashed := 0
	for _, p := range drawnPanels(c) {
		dashed += p.Dashed
		if p.Colored < 50 {
			t.Errorf("panel %s: %d coloured pixels in its plot area, want a drawn chart (>= 50)", p.ID, p.Colored)
		}
	}
	if want == 0 || dashed != want {
		t.Errorf("%d series drawn dashed, want the page's %d (and some)", dashed, want)
	}
	log.check(t, c)
}
