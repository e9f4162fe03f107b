package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

// TestClusterPairingCodes: a pairing code issued through one node is
// exchanged through another, once; the same code exchanged at once through
// two nodes pairs exactly once; the paired glasses refresh through a third;
// an address's exchanges are limited across the nodes.
func TestClusterPairingCodes(t *testing.T) {
	rs := redistest.Start(t)
	a, b, c := startNode(t, rs, "gw-a"), startNode(t, rs, "gw-b"), startNode(t, rs, "gw-c")
	issue := func(n *node, endUser string) string {
		t.Helper()
		r := n.do(t, "POST", "/v1/pairings", clusterKeyA, `{"end_user_id":"`+endUser+`","device":"meta-rayban-display"}`)
		var body struct{ Code string }
		if err := json.Unmarshal([]byte(r.body), &body); r.status != 201 || err != nil || body.Code == "" {
			t.Fatalf("POST /v1/pairings = %d %s", r.status, r.body)
		}
		return body.Code
	}
	exchange := func(n *node, code string) reply {
		return n.do(t, "POST", "/v1/pairings/exchange", "", `{"code":"`+code+`","device":"meta-rayban-display"}`)
	}
	code := issue(a, "u_glasses_1")
	ex := exchange(b, code)
	var creds struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal([]byte(ex.body), &creds); ex.status != 201 || err != nil || creds.RefreshToken == "" {
		t.Fatalf("exchange through b of a's code = %d %s", ex.status, ex.body)
	}
	if r := exchange(a, code); r.status != 401 || !strings.Contains(r.body, "already used") {
		t.Fatalf("the used code through a = %d %s", r.status, r.body)
	}
	if r := c.do(t, "POST", "/v1/pairings/refresh", "", `{"refresh_token":"`+creds.RefreshToken+`","device":"meta-rayban-display"}`); r.status != 200 {
		t.Fatalf("refresh through c = %d %s", r.status, r.body)
	}
	for i := range 3 {
		code := issue(c, fmt.Sprintf("u_glasses_race_%d", i))
		var wg sync.WaitGroup
		got := make([]reply, 2)
		for j, n := range []*node{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[j] = exchange(n, code)
			}()
		}
		wg.Wait()
		if got[0].status+got[1].status != 201+401 || !strings.Contains(got[0].body+got[1].body, "already used") {
			t.Fatalf("race %d: %d %s / %d %s, want one 201 and one already used", i, got[0].status, got[0].body, got[1].status, got[1].body)
		}
	}
	// Eight exchanges from this address so far, spread over three nodes;
	// the limit (10 a minute per address) is the cluster's.
	for _, n := range []*node{c, c} {
		if r := exchange(n, "AAAA-AAAA"); r.status != 401 {
			t.Fatalf("a guess = %d %s", r.status, r.body)
		}
	}
	if r := exchange(a, "AAAA-AAAB"); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("the 11th exchange from one address across the nodes = %d %s, want 429", r.status, r.body)
	}
}
