package titles

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/session"
)

// Lookup finds an open session by id.
type Lookup func(id string) (*session.Session, bool)

// Route is PUT /v1/sessions/{id}/title (scope conversations:write):
// setTitle for partners. 200 {"outcome":"set"} names a session that never
// had a name; {"outcome":"named"} leaves a name the person set or cleared
// (or an earlier one) in place. An unknown session and another partner's
// are the same 404; a missing or blank title, or one longer than
// session.MaxTitleChars, is 400.
func Route(lookup Lookup) gateway.Route {
	return gateway.Route{Method: http.MethodPut, Path: "/v1/sessions/{id}/title",
		Scope: gateway.ScopeConversationsWrite, Handler: titleHandler(lookup)}
}

type titleBody struct {
	Title *string `json:"title"`
}

type titleHandler Lookup

func (lookup titleHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, _ := gateway.PrincipalFrom(r.Context())
	id := mux.Vars(r)["id"]
	var b titleBody
	if err := gateway.DecodeJSON(r, &b); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	if b.Title == nil {
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: required"))
		return
	}
	switch {
	case session.NormalizeTitle(*b.Title) == "":
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: must not be blank"))
		return
	case utf8.RuneCountInString(strings.Join(strings.Fields(*b.Title), " ")) > session.MaxTitleChars:
		// Refused rather than cut: the partner sent it, and should know.
		gateway.WriteError(w, r, gateway.Errorf(gateway.InvalidRequest, "title: at most %d characters", session.MaxTitleChars))
		return
	}
	s, ok := lookup(id)
	if !ok || s.Owner().PartnerID != p.PartnerID {
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no open session %q", id))
		return
	}
	outcome := s.SetTitle(*b.Title)
	if outcome == session.TitleNotFound {
		gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no open session %q", id))
		return
	}
	gateway.WriteJSON(w, http.StatusOK, map[string]string{"outcome": string(outcome)})
}
