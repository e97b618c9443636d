package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/store/postgres"
)

// busEnv names the NATS server of a hub of several replicas when --bus is
// not given.
const busEnv = "CORRAL_BUS"

// hubCluster connects a hub replica to NATS (--bus) and to the event log
// in its PostgreSQL; nil without --bus. The connection closes after the
// hub has stopped (the notifier's stage, below the hub's).
func hubCluster(ctx context.Context, e *env, d *daemon, f hubFlags, dbURL string) (*hub.ClusterOptions, error) {
	bus := f.bus
	if bus == "" {
		bus = e.getenv(busEnv)
	}
	if bus == "" {
		return nil, nil
	}
	if !strings.HasPrefix(bus, "nats://") && !strings.HasPrefix(bus, "tls://") {
		return nil, fmt.Errorf("--bus (or $%s) takes a nats:// URL", busEnv)
	}
	pg, ok := d.db.(*postgres.Store)
	if dbURL == "" || !ok {
		return nil, errors.New("--bus needs --db postgres://…: the replicas share their users, devices and event order there")
	}
	log, err := pg.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	nc, err := nats.Connect(bus, nats.Name("corral hub "+host), nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond),
		nats.Timeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("--bus: %w", err)
	}
	d.run("bus", stageNotify, func(ctx context.Context) error {
		<-ctx.Done()
		nc.Close()
		return nil
	})
	d.log.Info("hub replica on the bus", "bus", bus)
	return &hub.ClusterOptions{Log: log, Conn: nc}, nil
}
