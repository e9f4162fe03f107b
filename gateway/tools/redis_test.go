package tools_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
	"github.com/veraneural/vera-gateway/gateway/tools"
)

// TestRedisStoreAcrossNodes: two nodes on one Redis see the same tools,
// keep the first CreatedAt on a replace, hold the 25-tool limit together
// under concurrent PUTs to both, and keep partners apart.
func TestRedisStoreAcrossNodes(t *testing.T) {
	rs := redistest.Start(t)
	a, b := newEnvOn(t, tools.NewRedisStore(rs.Client())), newEnvOn(t, tools.NewRedisStore(rs.Client()))
	code, created := a.do(t, keyA, "PUT", "/v1/tools/send_message", putBody("Send a text message", contactS))
	if code != http.StatusCreated {
		t.Fatalf("PUT on node a = %d %s", code, created)
	}
	code, replaced := b.do(t, keyA, "PUT", "/v1/tools/send_message", putBody("Send an SMS", contactS))
	if code != http.StatusOK {
		t.Fatalf("replace on node b = %d %s", code, replaced)
	}
	first := strings.SplitN(strings.SplitN(string(created), `"created_at":"`, 2)[1], `"`, 2)[0]
	if !strings.Contains(string(replaced), `"created_at":"`+first+`"`) {
		t.Fatalf("replace lost the first created_at %s: %s", first, replaced)
	}
	if code, got := a.do(t, keyA, "GET", "/v1/tools/send_message", ""); code != 200 || !strings.Contains(string(got), "Send an SMS") {
		t.Fatalf("GET on node a after b's replace = %d %s", code, got)
	}
	if code, _ := b.do(t, keyB, "GET", "/v1/tools/send_message", ""); code != 404 {
		t.Fatalf("partner B sees A's tool: %d", code)
	}
	if err := b.reg.Validate("partner-a", "send_message", []byte(`{"to":{"phone":"+4915112345678"},"text":"hi"}`)); err != nil {
		t.Fatalf("Validate on node b: %v", err)
	}

	var wg sync.WaitGroup
	codes := make([]int, 40)
	for i := range codes {
		e := a
		if i%2 == 1 {
			e = b
		}
		wg.Go(func() {
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/v1/tools/c%d", e.srv.URL, i), strings.NewReader(putBody("d", `{"type":"object"}`)))
			req.Header.Set("Authorization", "Bearer "+keyA)
			if resp, err := e.srv.Client().Do(req); err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	made := 0
	for _, c := range codes {
		if c == 201 {
			made++
		}
	}
	if made != 24 { // 25 with send_message
		t.Fatalf("%d tools created across two nodes, want 24 (the limit is 25 per partner)", made)
	}

	rs.Stop()
	if code, body := a.do(t, keyA, "GET", "/v1/tools", ""); code != 503 {
		t.Fatalf("list with Redis down = %d %s, want 503", code, body)
	}
}
