package rtc_test

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// blackholeConn drops every outgoing datagram once cut is set: the peer
// vanishes from the network without a DTLS close_notify.
type blackholeConn struct {
	net.PacketConn
	cut atomic.Bool
}

func (b *blackholeConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if b.cut.Load() {
		return len(p), nil
	}
	return b.PacketConn.WriteTo(p, addr)
}

type peer struct {
	t  *testing.T
	pc *webrtc.PeerConnection
	bh *blackholeConn
}

// vanishingPeer builds a loopback pion peer whose UDP can be cut; it returns
// the peer and its complete offer.
func vanishingPeer(t *testing.T) (*peer, string) {
	t.Helper()
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	bh := &blackholeConn{PacketConn: udp}
	se := webrtc.SettingEngine{}
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	se.SetIncludeLoopbackCandidate(true)
	mux := webrtc.NewICEUDPMux(nil, bh)
	se.SetICEUDPMux(mux)
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: rtc.OpusCodec, PayloadType: 111}, webrtc.RTPCodecTypeAudio); err != nil {
		t.Fatal(err)
	}
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(m)).NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, pc: pc, bh: bh}
	t.Cleanup(func() {
		_ = pc.GracefulClose()
		_ = mux.Close()
		_ = udp.Close()
	})
	tr, err := webrtc.NewTrackLocalStaticRTP(rtc.OpusCodec, "a", "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.AddTrack(tr); err != nil {
		t.Fatal(err)
	}
	if _, err := pc.CreateDataChannel(rtc.EventsLabel, nil); err != nil {
		t.Fatal(err)
	}
	o, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	g := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(o); err != nil {
		t.Fatal(err)
	}
	<-g
	return p, pc.LocalDescription().SDP
}

func (p *peer) connect(answer string) error {
	return p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer})
}

func (p *peer) vanish() { p.bh.cut.Store(true) }
