package audit_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, redistest.LeakOptions...) }

const (
	keyA    = "vera_sk_audit_partner_a_0123456789"
	keyB    = "vera_sk_audit_partner_b_0123456789"
	keyNoAu = "vera_sk_audit_no_scope_0123456789"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// clock is a settable test clock.
func openDB(t *testing.T, path string) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newLog(t *testing.T, db *bolt.DB, cfg audit.Config, clk *clocktest.Clock) *audit.Log {
	t.Helper()
	st, err := audit.NewBoltStore(db)
	if err != nil {
		t.Fatal(err)
	}
	l, err := audit.New(cfg, st, audit.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func rec(action, session, decision string) audit.Record {
	return audit.Record{ActionID: action, ActionType: "send_message", SessionID: session, EndUserID: "u_1", Decision: decision, Via: "tap", Surface: "phone"}
}

func ids(rs []audit.Record) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ActionID+"/"+r.Decision)
	}
	return strings.Join(out, ",")
}

// TestRecordsSurviveReopenAndStayWithTheirPartner: records are durable
// across a reopen of the file, partitioned by partner, filtered and paged
// oldest first.
func TestRecordsSurviveReopenAndStayWithTheirPartner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vera.db")
	clk := clocktest.NewClock(t0)
	db := openDB(t, path)
	l := newLog(t, db, audit.DefaultConfig(), clk)
	for _, r := range []audit.Record{rec("a1", "s1", audit.DecisionApproved), rec("a2", "s1", audit.DecisionDeclined),
		rec("a3", "s2", audit.DecisionExpired), rec("a1", "s1", audit.DecisionResult)} {
		clk.Advance(time.Second)
		if _, err := l.Record("pa", r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Record("pb", rec("b1", "s9", audit.DecisionApproved)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openDB(t, path)
	defer db.Close()
	l = newLog(t, db, audit.DefaultConfig(), clk)
	all, more, err := l.List("pa", audit.Query{})
	if err != nil || more || ids(all) != "a1/approved,a2/declined,a3/expired,a1/result" {
		t.Fatalf("after reopen: %s more=%v err=%v", ids(all), more, err)
	}
	if !all[0].At.Equal(t0.Add(time.Second)) || all[0].Via != "tap" || all[0].Surface != "phone" || all[0].EndUserID != "u_1" {
		t.Fatalf("record %+v", all[0])
	}
	for _, c := range []struct {
		q    audit.Query
		want string
		more bool
	}{
		{audit.Query{SessionID: "s1"}, "a1/approved,a2/declined,a1/result", false},
		{audit.Query{ActionID: "a1"}, "a1/approved,a1/result", false},
		{audit.Query{ActionID: "b1"}, "", false}, // another partner's action
		{audit.Query{SessionID: "s9"}, "", false},
		{audit.Query{Limit: 2}, "a1/approved,a2/declined", true},
		{audit.Query{Limit: 2, After: 2}, "a3/expired,a1/result", false},
		{audit.Query{SessionID: "s1", Limit: 1, After: 1}, "a2/declined", true},
		{audit.Query{After: ^uint64(0)}, "", false},
	} {
		got, more, err := l.List("pa", c.q)
		if err != nil || ids(got) != c.want || more != c.more {
			t.Errorf("List(%+v) = %s more=%v err=%v, want %s more=%v", c.q, ids(got), more, err, c.want, c.more)
		}
	}
	if got, _, _ := l.List("pb", audit.Query{}); ids(got) != "b1/approved" || got[0].ID != "1" {
		t.Fatalf("partner b: %+v", got)
	}
	if got, _, _ := l.List("nobody", audit.Query{}); len(got) != 0 {
		t.Fatalf("unknown partner: %+v", got)
	}
}

// TestRetentionByAgeAndCount: records past retention_days go on append
// and on Prune; a partner over max_records_per_partner loses its oldest
// only, and another partner's records are untouched.
func TestRetentionByAgeAndCount(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "vera.db"))
	defer db.Close()
	clk := clocktest.NewClock(t0)
	cfg := audit.Config{RetentionDays: 90, MaxRecordsPerPartner: 3}
	l := newLog(t, db, cfg, clk)
	for i := range 5 {
		if _, err := l.Record("pa", rec(fmt.Sprintf("a%d", i), "s", audit.DecisionDeclined)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Record("pb", rec("b0", "s", audit.DecisionDeclined)); err != nil {
		t.Fatal(err)
	}
	got, _, _ := l.List("pa", audit.Query{})
	if ids(got) != "a2/declined,a3/declined,a4/declined" || got[0].ID != "3" {
		t.Fatalf("count bound kept %s (first id %s)", ids(got), got[0].ID)
	}
	clk.Advance(89 * 24 * time.Hour)
	if _, err := l.Record("pa", rec("a5", "s", audit.DecisionApproved)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * 24 * time.Hour) // a2..a4 and b0 are now 91 days old, a5 2 days
	if got, _, _ := l.List("pb", audit.Query{}); len(got) != 1 {
		t.Fatalf("pb pruned before Prune: %s", ids(got))
	}
	if err := l.Prune(); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := l.List("pa", audit.Query{}); ids(got) != "a5/approved" {
		t.Fatalf("after prune pa: %s", ids(got))
	}
	if got, _, _ := l.List("pb", audit.Query{}); len(got) != 0 {
		t.Fatalf("after prune pb: %s", ids(got))
	}
	// Appending after a prune continues the sequence: cursors stay valid.
	r, err := l.Record("pa", rec("a6", "s", audit.DecisionApproved))
	if err != nil || r.ID != "7" {
		t.Fatalf("next id %q, err %v", r.ID, err)
	}
}

func TestRecordValidation(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "vera.db"))
	defer db.Close()
	l := newLog(t, db, audit.DefaultConfig(), clocktest.NewClock(t0))
	for name, r := range map[string]audit.Record{
		"unknown decision": rec("a", "s", "maybe"),
		"no action":        rec("", "s", audit.DecisionApproved),
		"no session":       rec("a", "", audit.DecisionApproved),
	} {
		if _, err := l.Record("pa", r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := l.Record("", rec("a", "s", audit.DecisionApproved)); err == nil {
		t.Error("no partner: accepted")
	}
	for _, c := range []audit.Config{{RetentionDays: 0, MaxRecordsPerPartner: 1}, {RetentionDays: 1, MaxRecordsPerPartner: 0}} {
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "audit.") {
			t.Errorf("Validate(%+v) = %v, want an error naming the key", c, err)
		}
	}
}

// TestRecordHoldsNoText: the JSON form of a record has only the audit
// fields; nothing can carry message text, titles or inputs.
func TestRecordHoldsNoText(t *testing.T) {
	var fields []string
	rt := reflect.TypeOf(audit.Record{})
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	want := "id,action_id,action_type,session_id,end_user_id,decision,via,surface,status,at"
	if strings.Join(fields, ",") != want {
		t.Fatalf("record fields %v, want exactly %s", fields, want)
	}
}

// TestHTTPListIsPartnerScoped: GET /v1/audit/decisions over loopback HTTP
// needs audit:read, returns only the caller's records, pages with after,
// and rejects bad parameters naming them.
func TestHTTPListIsPartnerScoped(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "vera.db"))
	defer db.Close()
	clk := clocktest.NewClock(t0)
	l := newLog(t, db, audit.DefaultConfig(), clk)
	for i := range 3 {
		clk.Advance(time.Minute)
		if _, err := l.Record("partner-a", rec(fmt.Sprintf("a%d", i), "s1", audit.DecisionApproved)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Record("partner-b", rec("b0", "s2", audit.DecisionDeclined)); err != nil {
		t.Fatal(err)
	}
	cfg := gateway.DefaultConfig()
	cfg.Auth.Keys = []gateway.KeyConfig{
		{ID: "partner-a", Secret: keyA, Scopes: []string{gateway.ScopeAuditRead}},
		{ID: "partner-b", Secret: keyB, Scopes: []string{gateway.ScopeAuditRead}},
		{ID: "partner-c", Secret: keyNoAu, Scopes: []string{gateway.ScopeConversationsWrite}},
	}
	s, err := gateway.New(cfg, gateway.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount(l.Route())
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	get := func(key, query string) (int, audit.Page, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/audit/decisions"+query, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var p audit.Page
		if resp.StatusCode == 200 {
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, p, string(b)
	}
	code, p, _ := get(keyA, "?limit=2")
	if code != 200 || ids(p.Data) != "a0/approved,a1/approved" || !p.HasMore || p.NextAfter != "2" {
		t.Fatalf("page 1: %d %+v", code, p)
	}
	code, p, _ = get(keyA, "?limit=2&after="+p.NextAfter)
	if code != 200 || ids(p.Data) != "a2/approved" || p.HasMore {
		t.Fatalf("page 2: %d %+v", code, p)
	}
	if _, p, _ = get(keyA, "?action_id=b0"); len(p.Data) != 0 {
		t.Fatalf("partner a sees partner b's action: %+v", p)
	}
	if _, p, raw := get(keyB, "?session_id=s1"); len(p.Data) != 0 || !strings.Contains(raw, `"data":[]`) {
		t.Fatalf("partner b sees partner a's session: %s", raw)
	}
	if code, _, _ := get(keyNoAu, ""); code != 403 {
		t.Fatalf("without audit:read = %d, want 403", code)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?limit=501", "?after=-1", "?after=abc"} {
		code, _, raw := get(keyA, q)
		param, _, _ := strings.Cut(q[1:], "=")
		if code != 400 || !strings.Contains(raw, param) || !strings.Contains(raw, "invalid_request") {
			t.Errorf("%s = %d %s, want 400 naming %s", q, code, raw, param)
		}
	}
}

// TestFilterMatchesExactly: filters match whole values, also ones with
// quotes or HTML characters, and never a prefix or another field.
func TestFilterMatchesExactly(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "vera.db"))
	defer db.Close()
	l := newLog(t, db, audit.DefaultConfig(), clocktest.NewClock(t0))
	for _, r := range []audit.Record{rec("a1", `s"<1>`, audit.DecisionApproved), rec("a2", "s4", audit.DecisionApproved),
		rec("a3", "s42", audit.DecisionApproved), rec("s4", "s9", audit.DecisionApproved)} {
		if _, err := l.Record("pa", r); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[audit.Query]string{
		{SessionID: `s"<1>`}:              "a1/approved",
		{SessionID: "s4"}:                 "a2/approved",
		{ActionID: "s4"}:                  "s4/approved",
		{SessionID: "s9", ActionID: "s4"}: "s4/approved",
		{SessionID: "s"}:                  "",
	} {
		if got, _, err := l.List("pa", q); err != nil || ids(got) != want {
			t.Errorf("List(%+v) = %s, %v; want %s", q, ids(got), err, want)
		}
	}
}
