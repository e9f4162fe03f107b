package actions

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/audit"
	"github.com/veraneural/vera-gateway/gateway/session"
	"github.com/veraneural/vera-gateway/gateway/webhook"
)

// Route is POST /v1/actions/{id}/result (scope actions:write, idempotent):
// the partner reports what happened to an approved action. The session
// shows the result and confirms it to the person, the partner's webhooks
// get action.result, the audit the result. Another partner's action is 404.
func (f *Flow) Route() gateway.Route {
	return gateway.Route{Method: http.MethodPost, Path: "/v1/actions/{id}/result",
		Scope: gateway.ScopeActionsWrite, Idempotent: true, Handler: http.HandlerFunc(f.handleResult)}
}

type resultBody struct {
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
}

func (f *Flow) handleResult(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	id := mux.Vars(r)["id"]
	var b resultBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if b.Status != "succeeded" && b.Status != "failed" {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "status must be succeeded or failed, not %q", b.Status))
		return
	}
	act, err := f.takeResult(p.PartnerID, id)
	if err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	f.record(act.partner, audit.Record{ActionID: id, ActionType: act.typ, SessionID: act.sessionID, EndUserID: act.endUser,
		Decision: audit.DecisionResult, Via: "partner", Status: b.Status})
	// The session shows the result and confirms it to the person (spoken
	// in a voice call, captioned and shown in chat).
	if s, ok := f.o.Sessions(act.sessionID); ok {
		if err := s.ReportResult(id, b.Status); err != nil && !errors.Is(err, session.ErrClosed) {
			f.log.Warn("action result not shown in the session", "session", act.sessionID, "action", id, "err", err)
		}
	}
	ev, err := webhook.NewEvent(webhook.TypeActionResult, f.clock.Now(), webhook.ActionEvent{ActionID: id, ActionType: act.typ,
		SessionID: act.sessionID, EndUserID: act.endUser, Status: b.Status, Result: b.Result})
	if err == nil {
		_, err = f.o.Webhooks.Publish(act.partner, ev)
	}
	if err != nil {
		f.log.Warn("action.result webhook not queued", "action", id, "err", err)
	}
	gateway.WriteJSON(w, http.StatusOK, map[string]string{"action_id": id, "status": b.Status})
}

// takeResult marks partner's approved action id reported, once.
func (f *Flow) takeResult(partner, id string) (approvedAction, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.approved[id]
	switch {
	case a == nil || a.partner != partner:
		return approvedAction{}, gateway.Errorf(gateway.NotFound, "no approved action %q", id)
	case a.reported:
		return approvedAction{}, gateway.Errorf(gateway.Conflict, "the result of action %q was already reported", id)
	}
	a.reported = true
	return *a, nil
}
