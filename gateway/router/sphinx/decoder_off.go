//go:build noembedded

package sphinx

// Decoder is absent in noembedded builds; NewPool never hands one out.
type Decoder struct{}

func newDecoder(Config) (*Decoder, error) { return nil, ErrUnavailable }

func newSpotDecoder(Config, []Keyphrase) (*Decoder, error) { return nil, ErrUnavailable }

// Spots is always empty in noembedded builds.
func (d *Decoder) Spots() []Spot { return nil }

// Start always fails in noembedded builds.
func (d *Decoder) Start(string) error { return ErrUnavailable }

// Process always fails in noembedded builds.
func (d *Decoder) Process([]int16) error { return ErrUnavailable }

// Hypothesis is always empty in noembedded builds.
func (d *Decoder) Hypothesis() string { return "" }

// End always fails in noembedded builds.
func (d *Decoder) End() (string, error) { return "", ErrUnavailable }

// Abort does nothing in noembedded builds.
func (d *Decoder) Abort() {}

// Close does nothing in noembedded builds.
func (d *Decoder) Close() {}

func (d *Decoder) attach(*workers) {}

func (d *Decoder) setPriority(Priority) {}
