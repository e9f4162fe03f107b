package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Tool is one partner tool.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// Store keeps tools per partner: MemoryStore for one node, RedisStore for a
// cluster. An error means the store could not answer (Redis down); the
// routes answer 503 then.
type Store interface {
	// Put creates or replaces partner's tool t.Name. Creating a tool when
	// the partner already has max fails with ErrLimit; replacing never
	// does. It reports whether the tool is new and keeps CreatedAt of a
	// replaced tool.
	Put(partner string, t Tool, max int) (Tool, bool, error)
	Get(partner, name string) (Tool, bool, error)
	// Delete reports whether the tool existed.
	Delete(partner, name string) (bool, error)
	// List returns partner's tools sorted by name.
	List(partner string) ([]Tool, error)
}

// MemoryStore is the in-process Store.
type MemoryStore struct {
	mu    sync.Mutex // mu guards tools
	tools map[string]map[string]Tool
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{tools: map[string]map[string]Tool{}} }

// Put implements Store.
func (m *MemoryStore) Put(partner string, t Tool, max int) (Tool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.tools[partner]
	if p == nil {
		p = map[string]Tool{}
		m.tools[partner] = p
	}
	old, exists := p[t.Name]
	if !exists && len(p) >= max {
		return Tool{}, false, ErrLimit
	}
	if exists {
		t.CreatedAt = old.CreatedAt
	}
	p[t.Name] = t
	return t, !exists, nil
}

// Get implements Store.
func (m *MemoryStore) Get(partner, name string) (Tool, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tools[partner][name]
	return t, ok, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(partner, name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.tools[partner][name]
	delete(m.tools[partner], name)
	return ok, nil
}

// List implements Store.
func (m *MemoryStore) List(partner string) ([]Tool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Tool, 0, len(m.tools[partner]))
	for _, t := range m.tools[partner] {
		out = append(out, t)
	}
	sortTools(out)
	return out, nil
}

func sortTools(ts []Tool) {
	slices.SortFunc(ts, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
}
