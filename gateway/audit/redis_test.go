package audit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/clock/clocktest"
	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

func redisLog(t *testing.T, s audit.Store, cfg audit.Config, clk *clocktest.Clock) *audit.Log {
	t.Helper()
	l, err := audit.New(cfg, s, audit.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRedisStorePartnerScopedPagedAndDurable: two nodes append to one
// partner's log; either reads it whole, filtered and paged, after a Redis
// restart; another partner sees none of it.
func TestRedisStorePartnerScopedPagedAndDurable(t *testing.T) {
	rs := redistest.Start(t)
	clk := clocktest.NewClock(t0)
	a := redisLog(t, audit.NewRedisStore(rs.Client()), audit.DefaultConfig(), clk)
	b := redisLog(t, audit.NewRedisStore(rs.Client()), audit.DefaultConfig(), clk)
	for i, r := range []audit.Record{rec("a1", "s1", audit.DecisionApproved), rec("a2", "s1", audit.DecisionDeclined),
		rec("a3", "s2", audit.DecisionExpired), rec("a1", "s1", audit.DecisionResult)} {
		clk.Advance(time.Second)
		l := a
		if i%2 == 1 {
			l = b
		}
		if _, err := l.Record("pa", r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Record("pb", rec("b1", "s9", audit.DecisionApproved)); err != nil {
		t.Fatal(err)
	}
	rs.Stop()
	if _, err := a.Record("pa", rec("lost", "s", audit.DecisionApproved)); err == nil {
		t.Fatal("a record was accepted with Redis down")
	}
	rs.Start()
	for _, c := range []struct {
		q    audit.Query
		want string
		more bool
	}{
		{audit.Query{}, "a1/approved,a2/declined,a3/expired,a1/result", false},
		{audit.Query{SessionID: "s1"}, "a1/approved,a2/declined,a1/result", false},
		{audit.Query{ActionID: "a1"}, "a1/approved,a1/result", false},
		{audit.Query{ActionID: "b1"}, "", false},
		{audit.Query{Limit: 2}, "a1/approved,a2/declined", true},
		{audit.Query{Limit: 2, After: 2}, "a3/expired,a1/result", false},
		{audit.Query{SessionID: "s1", Limit: 1, After: 1}, "a2/declined", true},
		{audit.Query{After: ^uint64(0)}, "", false},
	} {
		got, more, err := b.List("pa", c.q)
		if err != nil || ids(got) != c.want || more != c.more {
			t.Errorf("List(%+v) = %s more=%v err=%v, want %s more=%v", c.q, ids(got), more, err, c.want, c.more)
		}
	}
	if got, _, _ := a.List("pb", audit.Query{}); ids(got) != "b1/approved" || got[0].ID != "1" || !got[0].At.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("partner b: %+v", got)
	}
}

// TestRedisStoreRetention: the count bound and the age bound, on append
// and on Prune, per partner; ids keep increasing after a prune.
func TestRedisStoreRetention(t *testing.T) {
	rs := redistest.Start(t)
	clk := clocktest.NewClock(t0)
	l := redisLog(t, audit.NewRedisStore(rs.Client()), audit.Config{RetentionDays: 90, MaxRecordsPerPartner: 3}, clk)
	for i := range 5 {
		if _, err := l.Record("pa", rec(fmt.Sprintf("a%d", i), "s", audit.DecisionDeclined)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Record("pb", rec("b0", "s", audit.DecisionDeclined)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := l.List("pa", audit.Query{}); ids(got) != "a2/declined,a3/declined,a4/declined" || got[0].ID != "3" {
		t.Fatalf("count bound kept %s", ids(got))
	}
	clk.Advance(89 * 24 * time.Hour)
	if _, err := l.Record("pa", rec("a5", "s", audit.DecisionApproved)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * 24 * time.Hour)
	if err := l.Prune(); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := l.List("pa", audit.Query{}); ids(got) != "a5/approved" {
		t.Fatalf("after prune pa: %s", ids(got))
	}
	if got, _, _ := l.List("pb", audit.Query{}); len(got) != 0 {
		t.Fatalf("after prune pb: %s", ids(got))
	}
	if r, err := l.Record("pa", rec("a6", "s", audit.DecisionApproved)); err != nil || r.ID != "7" {
		t.Fatalf("next id %q, err %v", r.ID, err)
	}
}
