package controller

import (
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	"github.com/modkind/modkind/executor/job"
)

const (
	// LeaderElectionID names the Lease the replicas elect their leader with.
	LeaderElectionID = "modkind.io"
	// leaderClientTimeout bounds one request of the election: half controller-runtime's renew
	// deadline (10 s), as controller-runtime sets it, so that one slow answer does not cost the
	// lead.
	leaderClientTimeout = 5 * time.Second
	// envPodIP is the Pod's IP, which the chart sets from the downward API: where the other
	// replicas reach this one.
	envPodIP = "POD_IP"
)

// LeaderLease is the lock the replicas elect their leader with: the Lease modkind.io in
// namespace, as controller-runtime would make it, but held under an identity that names advertise,
// where this replica's artifact endpoint is reached, so that a follower knows where to relay
// runners (job.LeaderLease). Its events (became leader) go to the recorder the returned setter is
// given once the manager, which makes recorders, exists.
func LeaderLease(cfg *rest.Config, namespace, advertise string) (*job.LeaderLease, func(record.EventRecorder), error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, nil, err
	}
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = leaderClientTimeout
	coordination, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	events := &lateRecorder{}
	lock := &resourcelock.LeaseLock{
		LeaseMeta: metav1.ObjectMeta{Namespace: namespace, Name: LeaderElectionID},
		Client:    coordination,
		LockConfig: resourcelock.ResourceLockConfig{
			Identity:      job.LeaderIdentity(host+"_"+string(uuid.NewUUID()), advertise),
			EventRecorder: events,
		},
	}
	return job.NewLeaderLease(lock), events.set, nil
}

// lateRecorder records leader election events once it is given a recorder; before, it drops
// them (none happen before the manager starts).
type lateRecorder struct {
	mu sync.Mutex
	r  record.EventRecorder
}

func (l *lateRecorder) set(r record.EventRecorder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r = r
}

func (l *lateRecorder) Eventf(obj runtime.Object, eventType, reason, message string, args ...any) {
	l.mu.Lock()
	r := l.r
	l.mu.Unlock()
	if r != nil {
		r.Eventf(obj, eventType, reason, message, args...)
	}
}

// advertiseAddress is where the other replicas reach this one's artifact endpoint, whose
// listener binds bind: the address given, else POD_IP with bind's port, else bind itself when
// it names a host; empty when nothing says (followers then refuse runners rather than relay them).
func advertiseAddress(given, bind string) (string, error) {
	if given != "" {
		if host, port, err := net.SplitHostPort(given); err != nil || host == "" || port == "" {
			return "", fmt.Errorf("--artifacts-advertise-address %q must be host:port", given)
		}
		return given, nil
	}
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return "", fmt.Errorf("--artifacts-bind-address %q must be [host]:port", bind)
	}
	if ip := os.Getenv(envPodIP); ip != "" {
		return net.JoinHostPort(ip, port), nil
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "", nil
	}
	return bind, nil
}
