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

// Engine owns the shared pion settings and the UDP socket every session
// uses. It is safe for concurrent use; Close it after all Conns are closed.
type Engine struct {
	cfg  Config
	log  *slog.Logger
	se   webrtc.SettingEngine
	mux  ice.UDPMux // nil in port-range mode
	conn net.PacketConn

	closeOnce sync.Once
	closeErr  error
}

// NewEngine validates cfg and, in mux mode, binds the shared UDP port.
func NewEngine(cfg Config, log *slog.Logger) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = discardLogger()
	}
	e := &Engine{cfg: cfg, log: log}
	se := webrtc.SettingEngine{LoggerFactory: slogFactory{log: log}}
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetICETimeouts(cfg.ICEDisconnectedTimeout, cfg.ICEFailedTimeout, cfg.ICEKeepalive)
	nets := []webrtc.NetworkType{webrtc.NetworkTypeUDP4}
	if cfg.UDP6 {
		nets = append(nets, webrtc.NetworkTypeUDP6)
	}
	se.SetNetworkTypes(nets)
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
			return nil, fmt.Errorf("rtc: public_ips: %w", err)
		}
	}
	if cfg.PortMin != 0 {
		if err := se.SetEphemeralUDPPortRange(uint16(cfg.PortMin), uint16(cfg.PortMax)); err != nil {
			return nil, fmt.Errorf("rtc: port range: %w", err)
		}
	} else if cfg.UDPAddress == "" {
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
			return nil, fmt.Errorf("rtc: listen udp port %d: %w", cfg.UDPPort, err)
		}
		e.mux = mux
		se.SetICEUDPMux(mux)
	} else {
		addr := &net.UDPAddr{IP: net.ParseIP(cfg.UDPAddress), Port: cfg.UDPPort}
		network := "udp4"
		if cfg.UDP6 {
			network = "udp"
		}
		conn, err := net.ListenUDP(network, addr)
		if err != nil {
			return nil, fmt.Errorf("rtc: listen udp %s: %w", addr, err)
		}
		if cfg.UDPReadBuffer > 0 {
			if err := conn.SetReadBuffer(cfg.UDPReadBuffer); err != nil {
				log.Warn("rtc: udp read buffer", "bytes", cfg.UDPReadBuffer, "err", err)
			}
		}
		e.conn = conn
		e.mux = webrtc.NewICEUDPMux(slogFactory{log: log}.NewLogger("udpmux"), conn)
		se.SetICEUDPMux(e.mux)
	}
	e.se = se
	return e, nil
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

// Close releases the shared UDP socket. Conns still using it fail.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		if e.mux != nil {
			e.closeErr = errors.Join(e.mux.Close())
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
