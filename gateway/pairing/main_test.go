package pairing_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/veraneural/vera-gateway/gateway/cluster/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, redistest.LeakOptions...) }
