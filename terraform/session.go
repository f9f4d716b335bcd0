package terraform

import (
	"bytes"
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// session is one run's terraform, with the provider processes its calls attach to, if any.
type session struct {
	*tfexec.Terraform
	// changing runs the calls that write state (apply, refresh, destroy), detached so that they
	// outlive a controller killed meanwhile; Terraform runs the others (init, plan, show), which
	// leave nothing to adopt and die with the controller.
	changing  *tfexec.Terraform
	asking    askCommand
	providers *providerLease
	// log is the run's log (runlog.go), nil for none.
	log *RunLog
	// done says the run starts no more terraform, so that its slot serves another run while
	// this one saves what terraform wrote.
	done func()
}

func (s *session) plan(ctx context.Context, opts ...tfexec.PlanOption) (bool, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	s.log.command("plan")
	defer s.logged(s.Terraform)()
	changes, err := s.Plan(ctx, opts...)
	s.log.failed(err)
	return changes, err
}

// logged sends what tf prints for people to the run's log until the returned func is called.
func (s *session) logged(tf *tfexec.Terraform) func() {
	if s.log == nil {
		return func() {}
	}
	w := s.log.writer()
	tf.SetStdout(w)
	return func() {
		tf.SetStdout(nil)
		w.flush()
	}
}

// planJSON plans with -json and returns what the stream said. A failed plan's error carries the
// stream's error diagnostics, since -json writes them there and not to stderr.
func (s *session) planJSON(ctx context.Context, opts ...tfexec.PlanOption) (bool, *planStream, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	var out bytes.Buffer
	s.log.command("plan")
	changes, err := s.PlanJSON(ctx, &out, opts...)
	// PlanJSON leaves its writer set for every later command.
	s.SetStdout(nil)
	stream, perr := parsePlanStream(&out)
	s.log.stream(stream)
	if err != nil {
		if text := stream.errorText(); text != "" {
			err = errors.Errorf("%w\n%s", err, strings.TrimLeft(text, "\n"))
		}
		return false, stream, err
	}
	if perr != nil {
		return false, stream, errors.Wrap(perr, errReadPlanStream)
	}
	return changes, stream, nil
}

func (s *session) show(ctx context.Context, planFile string) (*tfjson.Plan, error) {
	var opts []tfexec.ShowOption
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.ShowPlanFile(ctx, planFile, opts...)
}

// applyJSON plans and applies with -json and returns what the stream said. A failed apply's
// error carries the stream's error diagnostics, since -json writes them there.
func (s *session) applyJSON(ctx context.Context, opts ...tfexec.ApplyOption) (*planStream, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	var out bytes.Buffer
	s.log.command("apply")
	err := s.changing.ApplyJSON(ctx, &out, opts...)
	// ApplyJSON leaves its writer set for every later command.
	s.changing.SetStdout(nil)
	stream, perr := parsePlanStream(&out)
	s.log.stream(stream)
	if err != nil {
		if text := stream.errorText(); text != "" {
			err = errors.Errorf("%w\n%s", err, strings.TrimLeft(text, "\n"))
		}
		return stream, err
	}
	if perr != nil {
		return stream, errors.Wrap(perr, errReadPlanStream)
	}
	return stream, nil
}

func (s *session) apply(ctx context.Context, opts ...tfexec.ApplyOption) error {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	s.log.command("apply")
	defer s.logged(s.changing)()
	err := s.changing.Apply(ctx, opts...)
	s.log.failed(err)
	return err
}

// refresh reads the real objects into the state, evaluates the outputs from them and applies
// nothing. It is `apply -refresh-only`, not `terraform refresh`: that one (terraform 1.11,
// OpenTofu 1.10) stores outputs evaluated from the planned objects, so an output of an argument
// changed outside Terraform kept the configured value instead of the real one.
func (s *session) refresh(ctx context.Context) error {
	opts := []tfexec.ApplyOption{tfexec.RefreshOnly(true)}
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	s.log.command("apply -refresh-only")
	defer s.logged(s.changing)()
	err := s.changing.Apply(ctx, opts...)
	s.log.failed(err)
	return err
}

func (s *session) destroy(ctx context.Context) error {
	var opts []tfexec.DestroyOption
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	s.log.command("destroy")
	defer s.logged(s.changing)()
	err := s.changing.Destroy(ctx, opts...)
	s.log.failed(err)
	return err
}

// askCommand starts the run's state-changing terraform by hand, since terraform-exec always
// passes -auto-approve and -input=false to apply: the executable (the detaching shim, where there
// is one), the work directory and the environment terraform-exec would give it.
type askCommand struct {
	exe, dir string
	env      map[string]string
}

// terraforms are one run's terraform: direct for the calls that change no state, detached for
// those that do (the same when runs cannot be detached here).
type terraforms struct {
	direct, detached *tfexec.Terraform
	// asking starts an apply that asks before it changes anything, detached as detached is.
	asking askCommand
}
