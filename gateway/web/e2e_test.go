package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/gatewaytest"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/web"
	"github.com/veraneural/vera-gateway/safety"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write docs/web-client.png from the browser test")

// echoCompanion answers every turn by reflecting it, streamed in two pieces.
type echoCompanion struct{}

func (echoCompanion) Converse(ctx context.Context, req session.ConverseRequest, onDelta func(string)) (session.Reply, error) {
	msg := "I hear you. You said: " + req.Text
	onDelta("I hear you. ")
	onDelta("You said: " + req.Text)
	rep := session.Reply{Message: msg, Model: "echo", Provider: "test"}
	if strings.Contains(req.Text, "remind me") {
		rep.ProposedActions = []session.Action{{ID: "act_1", Type: "reminder", Title: "Remind you to call Sam", Summary: "Today at 18:00"}}
	}
	return rep, nil
}

// devAuth accepts loopback clients without a token, as dev mode does.
func devAuth(r *http.Request, token string) (gateway.Principal, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		return gateway.Principal{}, errors.New("not loopback")
	}
	return gateway.Principal{PartnerID: "dev", EndUserID: "dev-user"}, nil
}

type report struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	HUD   *struct {
		CardID    string   `json:"card_id"`
		Surface   string   `json:"surface"`
		Profile   string   `json:"profile"`
		Page      int      `json:"page"`
		Of        int      `json:"of"`
		Indicator string   `json:"indicator"`
		Focus     string   `json:"focus"`
		DataPage  string   `json:"data_page"`
		Title     string   `json:"title"`
		Lines     []string `json:"lines"`
		Ops       int      `json:"ops"`
		Width     int      `json:"width"`
		Height    int      `json:"height"`
	} `json:"hud"`
	Paged *struct {
		Page     int    `json:"page"`
		DataPage string `json:"data_page"`
	} `json:"paged"`
	AfterEscape      *string `json:"after_escape"`
	AfterEscapeFirst *string `json:"after_escape_first"`
	FocusMoved       *struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"focus_moved"`
	Events []struct {
		Type string `json:"type"`
		Seq  int64  `json:"seq"`
	} `json:"events"`
	CardIndex       int `json:"card_index"`
	FirstDeltaIndex int `json:"first_delta_index"`
	Acks            []struct {
		CardID  string `json:"card_id"`
		Page    int    `json:"page"`
		Surface string `json:"surface"`
	} `json:"acks"`
	Announced   string   `json:"announced"`
	VoiceNote   string   `json:"voice_note"`
	Resumed     bool     `json:"resumed_same_session"`
	ActionState string   `json:"action_state"`
	Latency     []string `json:"latency"`
	UserBubbles int      `json:"user_bubbles"`
	MicDisabled bool     `json:"mic_disabled"`
	Reply       string   `json:"reply"`
	HUDPNG      string   `json:"hud_png"`
}

// TestBrowserCrisisCardOnHUD runs the real page in headless Chromium against
// the real chat handler, safety detector and glasses layout: a crisis
// message puts the safety card's first page, 1/N, on the HUD emulator
// before any reply text, the page acknowledges it, and arrow keys page it.
func TestBrowserCrisisCardOnHUD(t *testing.T) {
	bin := fixtures.ChromiumPath()
	if bin == "" {
		t.Skip("chromium is not installed (CI installs it via .ci/deps.sh)")
	}
	counters := safety.NewCounters(nil)
	reports := make(chan report, 1)
	mux := http.NewServeMux()
	mux.Handle("/", web.Handler())
	mux.HandleFunc("POST /e2e/report", func(w http.ResponseWriter, r *http.Request) {
		var rep report
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&rep); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case reports <- rep:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	profile := t.TempDir()
	var (
		shotMu      sync.Mutex // guards pageShot and pageShotErr
		pageShot    []byte
		pageShotErr = errors.New("the page never asked for its screenshot")
	)
	mux.HandleFunc("POST /e2e/snap", func(w http.ResponseWriter, r *http.Request) {
		// The page waits for this answer, so it still shows the first card.
		b, err := fixtures.PageScreenshot(context.Background(), profile, "e2e=1")
		shotMu.Lock()
		pageShot, pageShotErr = b, err
		shotMu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	st := gatewaytest.NewStack(t, gatewaytest.Options{Converser: echoCompanion{},
		Deps: func(_ *gatewaytest.Stack, d *session.Deps) { d.Counters = counters },
		Chat: true, ChatAuth: devAuth,
		Mux: func(m *http.ServeMux) { m.Handle("/", mux) }})
	browser := fixtures.StartChromium(t, bin, profile, st.Server.URL+"/?e2e=1&mic=1&region=US&snap=/e2e/snap&report=/e2e/report")

	var rep report
	select {
	case rep = <-reports:
	case <-time.After(90 * time.Second):
		t.Fatalf("the page reported nothing; chromium said:\n%s", strings.Join(browser.Log(), "\n"))
	}
	if !rep.OK {
		t.Fatalf("page check failed: %s (events %+v)", rep.Error, rep.Events)
	}
	h := rep.HUD
	if h == nil || h.Page != 1 || h.Of < 1 || h.Indicator != fmt.Sprintf("1/%d", h.Of) || h.DataPage != h.Indicator {
		t.Fatalf("HUD state %+v", h)
	}
	if h.Profile != "meta-rayban-display" || h.Width != 600 || h.Height != 600 || h.Title == "" || h.Ops == 0 || len(h.Lines) == 0 {
		t.Fatalf("HUD page %+v", h)
	}
	if !regexp.MustCompile(`\d{3}`).MatchString(strings.Join(h.Lines, " ")) {
		t.Errorf("first page shows no number: %q", h.Lines)
	}
	if rep.CardIndex < 0 || (rep.FirstDeltaIndex >= 0 && rep.CardIndex > rep.FirstDeltaIndex) {
		t.Fatalf("safety.card at %d, first reply.delta at %d", rep.CardIndex, rep.FirstDeltaIndex)
	}
	acked := map[int]bool{}
	for _, a := range rep.Acks {
		if a.CardID == h.CardID && a.Surface == h.Surface {
			acked[a.Page] = true
		}
	}
	if !acked[1] {
		t.Fatalf("page 1 not acknowledged: %+v", rep.Acks)
	}
	// Keys behave as on the glasses: Escape on page 1 keeps the sticky
	// safety card, ArrowDown pages (and acks), Escape goes back a page,
	// ArrowRight moves focus along the control row.
	if rep.AfterEscapeFirst == nil || *rep.AfterEscapeFirst != h.Indicator {
		t.Fatalf("Escape on page 1 removed the safety card: %v", rep.AfterEscapeFirst)
	}
	if h.Of > 1 {
		if rep.Paged == nil || rep.Paged.Page != 2 || rep.Paged.DataPage != fmt.Sprintf("2/%d", h.Of) || !acked[2] {
			t.Fatalf("ArrowDown did not page and ack: %+v acks %+v", rep.Paged, rep.Acks)
		}
		if rep.AfterEscape == nil || *rep.AfterEscape != h.Indicator {
			t.Fatalf("Escape did not go back to page 1: %v", rep.AfterEscape)
		}
	}
	if h.Focus == "" || rep.FocusMoved == nil || rep.FocusMoved.From != h.Focus {
		t.Fatalf("focus %q, moved %+v", h.Focus, rep.FocusMoved)
	}
	// After a dropped connection the page resumed the same session: no
	// message lost or shown twice.
	if !rep.Resumed || rep.UserBubbles != 2 {
		t.Errorf("resume: same session %v, %d user messages shown (want 2)", rep.Resumed, rep.UserBubbles)
	}
	if rep.ActionState != "Approved (tapped)" {
		t.Errorf("approve button: %q", rep.ActionState)
	}
	if len(rep.Latency) < 3 || !regexp.MustCompile(`first text \d+ ms, done \d+ ms`).MatchString(rep.Latency[0]) {
		t.Errorf("latency display %q", rep.Latency)
	}
	// No voice endpoint on this server: the mic turns itself off and says so.
	if !rep.MicDisabled || !strings.Contains(rep.VoiceNote, "not available") {
		t.Errorf("mic without a voice endpoint: disabled=%v note %q", rep.MicDisabled, rep.VoiceNote)
	}
	if !strings.HasPrefix(rep.Announced, "Safety resources.") {
		t.Errorf("aria-live announcement %q", rep.Announced)
	}
	if !strings.Contains(rep.Reply, "I want to end my life tonight") {
		t.Errorf("reply %q", rep.Reply)
	}
	// The server saw the acks too: the referral counters count an acked card.
	if snap := counters.Snapshot(); snap.Totals[safety.EventShown] == 0 || snap.Totals[safety.EventAcked] == 0 {
		t.Errorf("safety counters %+v", snap.Totals)
	}
	// The page threw nothing.
	for _, l := range browser.Log() {
		if strings.Contains(l, "Uncaught") {
			t.Errorf("page error: %s", l)
		}
	}

	dir := fixtures.ArtifactDir(t.TempDir())
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(rep.HUDPNG, "data:image/png;base64,"))
	if err != nil || len(png) < 1000 {
		t.Fatalf("HUD png: %v (%d bytes)", err, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, "hud.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	// The report arrived after the snapshot request was answered.
	shotMu.Lock()
	page, err := pageShot, pageShotErr
	shotMu.Unlock()
	if err != nil || len(page) < 1000 {
		t.Fatalf("page screenshot: %v (%d bytes)", err, len(page))
	}
	if err := os.WriteFile(filepath.Join(dir, "web-client.png"), page, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifacts: %s/hud.png, %s/web-client.png (HUD %s, %d lines)", dir, dir, h.Indicator, len(h.Lines))
	if *updateScreenshot {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "web-client.png"), page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
