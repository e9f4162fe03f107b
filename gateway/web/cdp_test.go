package web_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// chromium is one headless Chromium started for a test: killed (with its
// process group) and reaped by the test's cleanup, its stderr kept.
type chromium struct {
	profile string
	mu      sync.Mutex // guards log
	log     []string
}

// startChromium runs bin headless on url with the user data directory
// profile, a DevTools port (read back from profile) and the flags the
// browser tests need. Register it after the server's cleanup, so that the
// browser goes first.
func startChromium(t testing.TB, bin, profile, url string) *chromium {
	t.Helper()
	return startChromiumSized(t, bin, profile, url, "1320,980")
}

// startChromiumSized is startChromium with a window of size "W,H" (the
// viewport, headless).
func startChromiumSized(t testing.TB, bin, profile, url, size string) *chromium {
	t.Helper()
	c := &chromium{profile: profile}
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--mute-audio", "--enable-logging=stderr", "--v=0",
		"--allow-loopback-in-peer-connection", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
		"--user-data-dir="+c.profile, "--window-size="+size, "--remote-debugging-port=0", url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.mu.Lock()
			if len(c.log) < 2000 {
				c.log = append(c.log, sc.Text())
			}
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		// Headless Chromium never exits by itself: kill the process group
		// it leads, by its own pid, then reap it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		<-done
	})
	return c
}

// Log returns what Chromium wrote to stderr so far.
func (c *chromium) Log() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

// cdp drives one page over the DevTools protocol: script evaluation,
// trusted key and mouse input (the same path as a person's keyboard) and
// screenshots. Calls are sequential; events read while waiting for an
// answer go to onEvent (nil: dropped).
type cdp struct {
	conn    *websocket.Conn
	id      int
	onEvent func(method string, params json.RawMessage)
}

// dialPage connects to the page whose URL contains match.
func (c *chromium) dialPage(ctx context.Context, match string) (*cdp, error) {
	var port string
	for port == "" {
		b, err := os.ReadFile(filepath.Join(c.profile, "DevToolsActivePort"))
		if err == nil {
			// Chromium may not have finished writing the file yet.
			port = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
			if port != "" {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cdp: no DevToolsActivePort (%v): %w", err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	var wsURL string
	for wsURL == "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/json/list", nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("cdp: list targets: %w", err)
		}
		var targets []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
			WS   string `json:"webSocketDebuggerUrl"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&targets)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("cdp: targets: %w", err)
		}
		for _, tg := range targets {
			if tg.Type == "page" && strings.Contains(tg.URL, match) {
				wsURL = tg.WS
			}
		}
		if wsURL != "" {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cdp: no page matching %q: %w", match, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	conn, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("cdp: dial: %w", err)
	}
	conn.SetReadLimit(64 << 20)
	return &cdp{conn: conn}, nil
}

func (d *cdp) Close() { _ = d.conn.CloseNow() }

// call sends one command and waits for its answer.
func (d *cdp) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	d.id++
	id := d.id
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := d.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("cdp: %s: %w", method, err)
	}
	for {
		_, b, err := d.conn.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("cdp: %s: %w", method, err)
		}
		var res struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(b, &res) != nil {
			continue
		}
		if res.Method != "" && d.onEvent != nil {
			d.onEvent(res.Method, res.Params)
		}
		if res.ID != id {
			continue // an event, or not ours
		}
		if res.Error != nil {
			return nil, fmt.Errorf("cdp: %s: %s", method, res.Error.Message)
		}
		return res.Result, nil
	}
}

// eval evaluates a script expression in the page (awaiting a promise) and
// decodes its JSON value into out (nil: ignore it).
func (d *cdp) eval(ctx context.Context, expr string, out any) error {
	raw, err := d.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return err
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("cdp: evaluate: %w", err)
	}
	if res.Exception != nil {
		return fmt.Errorf("cdp: %s %s", res.Exception.Text, res.Exception.Exception.Description)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// waitFor waits in the page until the script expression cond is truthy;
// the page polls it and the test waits on the promise, not on a clock.
func (d *cdp) waitFor(ctx context.Context, cond, what string) error {
	const ms = 20000
	script := fmt.Sprintf(`new Promise((resolve, reject) => {
  const start = performance.now();
  const tick = () => {
    let v = false;
    try { v = (%s); } catch (e) { v = false; }
    if (v) return resolve(true);
    if (performance.now() - start > %d) return reject(new Error(%q));
    setTimeout(tick, 20);
  };
  tick();
})`, cond, ms, "timed out waiting for "+what)
	return d.eval(ctx, script, nil)
}

// keys maps the keys the tests press to their DevTools key codes.
var keys = map[string]struct {
	code string
	vk   int
	text string
}{
	"Enter":      {"Enter", 13, "\r"},
	"Escape":     {"Escape", 27, ""},
	"ArrowLeft":  {"ArrowLeft", 37, ""},
	"ArrowUp":    {"ArrowUp", 38, ""},
	"ArrowRight": {"ArrowRight", 39, ""},
	"ArrowDown":  {"ArrowDown", 40, ""},
}

// press sends a real key press (down, up) to the focused element.
func (d *cdp) press(ctx context.Context, key string) error {
	k, ok := keys[key]
	if !ok {
		return fmt.Errorf("cdp: unknown key %q", key)
	}
	down := map[string]any{"type": "rawKeyDown", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk}
	if k.text != "" {
		down["type"] = "keyDown"
		down["text"] = k.text
	}
	if _, err := d.call(ctx, "Input.dispatchKeyEvent", down); err != nil {
		return err
	}
	_, err := d.call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": k.code,
		"windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk})
	return err
}

// insertText types text into the focused element as an IME would.
func (d *cdp) insertText(ctx context.Context, text string) error {
	_, err := d.call(ctx, "Input.insertText", map[string]any{"text": text})
	return err
}

// click presses and releases the left mouse button at the centre of the
// element selector matches (scrolled into view first).
func (d *cdp) click(ctx context.Context, selector string) error {
	var r struct{ X, Y float64 }
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) throw new Error('no element %s');
  el.scrollIntoView({block: 'center'}); const b = el.getBoundingClientRect();
  return {X: b.left + b.width / 2, Y: b.top + b.height / 2}; })()`, selector, strings.ReplaceAll(selector, "'", ""))
	if err := d.eval(ctx, expr, &r); err != nil {
		return err
	}
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		p := map[string]any{"type": typ, "x": r.X, "y": r.Y}
		if typ != "mouseMoved" {
			p["button"] = "left"
			p["clickCount"] = 1
		}
		if _, err := d.call(ctx, "Input.dispatchMouseEvent", p); err != nil {
			return err
		}
	}
	return nil
}

// screenshot captures the page's viewport as PNG.
func (d *cdp) screenshot(ctx context.Context) ([]byte, error) {
	raw, err := d.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		return nil, err
	}
	var res struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(res.Data)
	if err == nil && len(b) == 0 {
		err = errors.New("cdp: empty screenshot")
	}
	return b, err
}
