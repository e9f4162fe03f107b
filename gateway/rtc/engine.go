package rtc

import (
	cryptorand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
)

// Opus as every peer of this gateway must declare it.
const (
	OpusPayloadType = 111
	OpusClockRate   = 48000
	OpusFmtp        = "minptime=10;useinbandfec=1"
	// FrameSamples48k is one 20 ms frame on the RTP clock.
	FrameSamples48k = 960
)

// OpusCodec is the codec capability this gateway negotiates.
var OpusCodec = webrtc.RTPCodecCapability{
	MimeType:    webrtc.MimeTypeOpus,
	ClockRate:   OpusClockRate,
	Channels:    2,
	SDPFmtpLine: OpusFmtp,
}

// Engine owns the shared pion settings and the sockets every session uses
// (one UDP port, and optionally one TCP port). It is safe for concurrent
// use; Close it after all Conns are closed.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	se     webrtc.SettingEngine
	mux    ice.UDPMux // nil in port-range mode
	conn   net.PacketConn
	tcpMux ice.TCPMux // nil unless ICE-TCP is on
	tcpLn  net.Listener
	turn   *turnMinter // nil unless rtc.turn is set
	now    func() time.Time

	closeOnce sync.Once
	closeErr  error
}

// EngineOption adjusts an Engine beyond its Config (tests, embedding).
type EngineOption func(*engineOptions)

type engineOptions struct {
	now   func() time.Time
	tcpLn net.Listener
}

// WithClock sets the clock TURN credentials are minted against (default
// time.Now).
func WithClock(now func() time.Time) EngineOption {
	return func(o *engineOptions) { o.now = now }
}

// WithTCPListener serves ICE-TCP on ln (already bound, e.g. on port 0 in
// tests, or handed over by a supervisor) instead of binding tcp_port. The
// Engine owns ln from then on and closes it, even when NewEngine fails.
func WithTCPListener(ln net.Listener) EngineOption {
	return func(o *engineOptions) { o.tcpLn = ln }
}

// NewEngine validates cfg and, in mux mode, binds the shared UDP port, and
// the TCP port when tcp_port (or WithTCPListener) is set.
func NewEngine(cfg Config, log *slog.Logger, opts ...EngineOption) (*Engine, error) {
	var o engineOptions
	for _, opt := range opts {
		opt(&o)
	}
	fail := func(err error) (*Engine, error) {
		if o.tcpLn != nil {
			_ = o.tcpLn.Close()
		}
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	if log == nil {
		log = discardLogger()
	}
	e := &Engine{cfg: cfg, log: log, now: o.now}
	if e.now == nil {
		e.now = time.Now
	}
	if cfg.TURN.Enabled() {
		e.turn = newTURNMinter(cfg.TURN)
	}
	se, ifFilter, ipFilter, err := newSettingEngine(cfg, log)
	if err != nil {
		return fail(err)
	}
	if err := e.listenUDP(&se, ifFilter, ipFilter); err != nil {
		return fail(err)
	}
	tcp := cfg.TCPPort != 0 || o.tcpLn != nil
	if tcp {
		err := e.listenTCP(&se, o.tcpLn)
		o.tcpLn = nil // owned by e now
		if err != nil {
			_ = e.Close()
			return nil, err
		}
	}
	se.SetNetworkTypes(networkTypes(cfg.UDP6, tcp))
	e.se = se
	return e, nil
}

// newSettingEngine applies the candidate hygiene shared by every session
// and returns the gathering filters (nil when unrestricted).
func newSettingEngine(cfg Config, log *slog.Logger) (webrtc.SettingEngine, func(string) bool, func(net.IP) bool, error) {
	se := webrtc.SettingEngine{LoggerFactory: slogFactory{log: log}}
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetICETimeouts(cfg.ICEDisconnectedTimeout, cfg.ICEFailedTimeout, cfg.ICEKeepalive)
	if cfg.IncludeLoopback || cfg.LoopbackOnly {
		se.SetIncludeLoopbackCandidate(true)
	}
	var ifFilter func(string) bool
	var ipFilter func(net.IP) bool
	if cfg.LoopbackOnly {
		ifFilter = isLoopbackInterface
		ipFilter = func(ip net.IP) bool { return ip.IsLoopback() }
		se.SetRemoteIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
	} else if len(cfg.Interfaces) > 0 {
		allowed := slices.Clone(cfg.Interfaces)
		ifFilter = func(name string) bool { return slices.Contains(allowed, name) }
	}
	if ifFilter != nil {
		se.SetInterfaceFilter(ifFilter)
	}
	if ipFilter != nil {
		se.SetIPFilter(ipFilter)
	}
	if len(cfg.PublicIPs) > 0 {
		rule := webrtc.ICEAddressRewriteRule{
			External:        slices.Clone(cfg.PublicIPs),
			AsCandidateType: webrtc.ICECandidateTypeHost,
			Mode:            webrtc.ICEAddressRewriteReplace,
		}
		if err := se.SetICEAddressRewriteRules(rule); err != nil {
			return se, nil, nil, fmt.Errorf("rtc: public_ips: %w", err)
		}
	}
	return se, ifFilter, ipFilter, nil
}

// listenUDP binds the shared UDP port (mux mode) or sets the per-session
// port range.
func (e *Engine) listenUDP(se *webrtc.SettingEngine, ifFilter func(string) bool, ipFilter func(net.IP) bool) error {
	cfg, log := e.cfg, e.log
	if cfg.PortMin != 0 {
		if err := se.SetEphemeralUDPPortRange(uint16(cfg.PortMin), uint16(cfg.PortMax)); err != nil {
			return fmt.Errorf("rtc: port range: %w", err)
		}
		return nil
	}
	if cfg.UDPAddress == "" {
		// All interfaces: one socket per local address on the same port,
		// chosen by the same filters as gathering (a single socket bound to
		// 0.0.0.0 would advertise every address, filters or not).
		opts := []ice.UDPMuxFromPortOption{
			ice.UDPMuxFromPortWithLogger(slogFactory{log: log}.NewLogger("udpmux")),
			ice.UDPMuxFromPortWithNetworks(iceNetworks(cfg.UDP6)...),
		}
		if cfg.UDPReadBuffer > 0 {
			opts = append(opts, ice.UDPMuxFromPortWithReadBufferSize(cfg.UDPReadBuffer))
		}
		if cfg.IncludeLoopback || cfg.LoopbackOnly {
			opts = append(opts, ice.UDPMuxFromPortWithLoopback())
		}
		if ifFilter != nil {
			opts = append(opts, ice.UDPMuxFromPortWithInterfaceFilter(ifFilter))
		}
		if ipFilter != nil {
			opts = append(opts, ice.UDPMuxFromPortWithIPFilter(ipFilter))
		}
		mux, err := ice.NewMultiUDPMuxFromPort(cfg.UDPPort, opts...)
		if err != nil {
			return fmt.Errorf("rtc: listen udp port %d: %w", cfg.UDPPort, err)
		}
		e.mux = mux
		se.SetICEUDPMux(mux)
		return nil
	}
	addr := &net.UDPAddr{IP: net.ParseIP(cfg.UDPAddress), Port: cfg.UDPPort}
	network := "udp4"
	if cfg.UDP6 {
		network = "udp"
	}
	conn, err := net.ListenUDP(network, addr)
	if err != nil {
		return fmt.Errorf("rtc: listen udp %s: %w", addr, err)
	}
	if cfg.UDPReadBuffer > 0 {
		if err := conn.SetReadBuffer(cfg.UDPReadBuffer); err != nil {
			log.Warn("rtc: udp read buffer", "bytes", cfg.UDPReadBuffer, "err", err)
		}
	}
	e.conn = conn
	e.mux = webrtc.NewICEUDPMux(slogFactory{log: log}.NewLogger("udpmux"), conn)
	se.SetICEUDPMux(e.mux)
	return nil
}

func networkTypes(udp6, tcp bool) []webrtc.NetworkType {
	nets := []webrtc.NetworkType{webrtc.NetworkTypeUDP4}
	if udp6 {
		nets = append(nets, webrtc.NetworkTypeUDP6)
	}
	if tcp {
		nets = append(nets, webrtc.NetworkTypeTCP4)
		if udp6 {
			nets = append(nets, webrtc.NetworkTypeTCP6)
		}
	}
	return nets
}

func isLoopbackInterface(name string) bool {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return name == "lo"
	}
	return ifc.Flags&net.FlagLoopback != 0
}

func iceNetworks(udp6 bool) []ice.NetworkType {
	if udp6 {
		return []ice.NetworkType{ice.NetworkTypeUDP4, ice.NetworkTypeUDP6}
	}
	return []ice.NetworkType{ice.NetworkTypeUDP4}
}

// LocalAddrs are the shared UDP addresses in mux mode (one per local
// address when bound to all interfaces), nil in port-range mode.
func (e *Engine) LocalAddrs() []net.Addr {
	if e.mux == nil {
		return nil
	}
	return e.mux.GetListenAddresses()
}

// Config returns the validated configuration the engine runs with.
func (e *Engine) Config() Config { return e.cfg }

// NewPeerConnection creates a PeerConnection with its own MediaEngine
// (Opus only) and its own interceptor registry (NACK, RTCP reports, TWCC).
func (e *Engine) NewPeerConnection() (*webrtc.PeerConnection, error) {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: OpusCodec, PayloadType: OpusPayloadType}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("rtc: register opus: %w", err)
	}
	ir := &interceptor.Registry{}
	if err := webrtc.RegisterDefaultInterceptors(m, ir); err != nil {
		return nil, fmt.Errorf("rtc: interceptors: %w", err)
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(ir), webrtc.WithSettingEngine(e.se))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, fmt.Errorf("rtc: new peer connection: %w", err)
	}
	return pc, nil
}

// Close releases the shared UDP socket and the TCP listener (joining the
// TCP mux's goroutines). Conns still using them fail.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		if e.tcpMux != nil {
			e.closeErr = errors.Join(e.closeErr, e.tcpMux.Close())
		}
		if e.mux != nil {
			e.closeErr = errors.Join(e.closeErr, e.mux.Close())
		}
		if e.conn != nil {
			if err := e.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				e.closeErr = errors.Join(e.closeErr, err)
			}
		}
	})
	return e.closeErr
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = cryptorand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}
