package main

import (
	"context"
	"net/http"
	"sync"

	"github.com/gorilla/mux"

	"github.com/veraneural/vera-gateway/gateway"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// voiceOwners remembers which partner owns each live voice session, so that
// PATCH and DELETE from another partner get 404 (never 403: another
// partner's objects do not exist for it).
type voiceOwners struct {
	mu     sync.Mutex // mu guards byID
	byID   map[string]string
	create rtc.SessionFactory
}

func newVoiceOwners(create rtc.SessionFactory) *voiceOwners {
	return &voiceOwners{byID: map[string]string{}, create: create}
}

// ownedSession forgets its owner when the connection closes.
type ownedSession struct {
	rtc.Session
	forget func()
}

func (s ownedSession) Closed(reason error) {
	s.Session.Closed(reason)
	s.forget()
}

// New wraps the session factory and records the owner.
func (o *voiceOwners) New(ctx context.Context, info rtc.SessionInfo, c *rtc.Conn) (rtc.Session, error) {
	s, err := o.create(ctx, info, c)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.byID[info.ID] = info.Principal.PartnerID
	o.mu.Unlock()
	return ownedSession{Session: s, forget: func() {
		o.mu.Lock()
		delete(o.byID, info.ID)
		o.mu.Unlock()
	}}, nil
}

// guard answers 404 for a session another partner owns.
func (o *voiceOwners) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := gateway.PrincipalFrom(r.Context())
		o.mu.Lock()
		owner, ok := o.byID[mux.Vars(r)["id"]]
		o.mu.Unlock()
		if ok && owner != p.PartnerID {
			gateway.WriteError(w, r, gateway.Errorf(gateway.NotFound, "no such voice session"))
			return
		}
		next(w, r)
	}
}
