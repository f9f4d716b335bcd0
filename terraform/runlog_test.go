package terraform

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What terraform prints for people when it plans and applies: the lines the log keeps, and the
// values it must never keep (a plan's values, a provisioner's output, the outputs, ids).
const humanApply = `terraform_data.file["a"]: Refreshing state... [id=0c8e1a2b-aaaa-bbbb-cccc-0123456789ab]

Terraform used the selected providers to generate the following execution plan. Resource
actions are indicated with the following symbols:
  + create
  ~ update in-place

Terraform will perform the following actions:

  # terraform_data.file["b"] will be created
  + resource "terraform_data" "file" {
      + id     = (known after apply)
      + input  = {
          + content = <<-EOT
                terraform_data.x: Creation complete after 1s
                plan-value-secret
            EOT
          + path    = "/srv/traces/b"
        }
    }

  # module.net.aws_vpc.main must be replaced
-/+ resource "aws_vpc" "main" {
        cidr_block = "10.0.0.0/16" # forces replacement
    }

Plan: 2 to add, 0 to change, 1 to destroy.

Changes to Outputs:
  ~ path = "/srv/traces/a" -> "/srv/traces/b"
module.net.aws_vpc.main: Destroying... [id=vpc-0123]
module.net.aws_vpc.main: Destruction complete after 2s
terraform_data.file["b"]: Creating...
terraform_data.file["b"]: Provisioning with 'local-exec'...
terraform_data.file["b"] (local-exec): Executing: ["/bin/sh" "-c" "echo provisioner-value-secret"]
terraform_data.file["b"] (local-exec): provisioner-value-secret
terraform_data.file["b"]: Still creating... [10s elapsed]
terraform_data.file["b"]: Creation complete after 12s [id=6f1d2e3c-1111-2222-3333-444455556666]
data.http.x: Read complete after 0s [id=https://example.com/?token=id-value-secret]

Apply complete! Resources: 2 added, 0 changed, 1 destroyed.

Outputs:

path = "/srv/traces/b"
text = <<EOT
terraform_data.y: Creation complete after 1s
Apply complete! Resources: 9 added, 0 changed, 0 destroyed.
EOT
`

func TestRunLogHuman(t *testing.T) {
	l := NewRunLog()
	l.command("apply")
	l.human(humanApply)
	want := `$ terraform apply
terraform_data.file["a"]: Refreshing state...
terraform_data.file["b"]: will be created
module.net.aws_vpc.main: must be replaced
Plan: 2 to add, 0 to change, 1 to destroy.
module.net.aws_vpc.main: Destroying...
module.net.aws_vpc.main: Destruction complete after 2s
terraform_data.file["b"]: Creating...
terraform_data.file["b"]: Still creating... [10s elapsed]
terraform_data.file["b"]: Creation complete after 12s
data.http.x: Read complete after 0s
Apply complete! Resources: 2 added, 0 changed, 1 destroyed.
`
	got := l.Text(nil)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the log of a human apply: -want, +got:\n%s", diff)
	}
	for _, v := range []string{"secret", "/srv/traces", "10.0.0.0", "[id="} {
		if strings.Contains(got, v) {
			t.Errorf("the log holds %q, a value or an id", v)
		}
	}
}

// Terraform writes its output in pieces: the writer reads whole lines only, whatever the pieces.
func TestRunLogWriterPieces(t *testing.T) {
	for _, size := range []int{1, 7, 64, len(humanApply)} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			whole := NewRunLog()
			whole.human(humanApply)
			l := NewRunLog()
			w := l.writer()
			for i := 0; i < len(humanApply); i += size {
				_, _ = w.Write([]byte(humanApply[i:min(i+size, len(humanApply))]))
			}
			w.flush()
			if diff := cmp.Diff(whole.Text(nil), l.Text(nil)); diff != "" {
				t.Errorf("written in pieces of %d bytes: -whole, +pieces:\n%s", size, diff)
			}
		})
	}
}

// apply -json says the same in messages; the log takes their text without ids, and of a
// diagnostic only its summary (its detail may quote a value).
func TestRunLogStream(t *testing.T) {
	stream := `{"@level":"info","@message":"Terraform 1.11.4","type":"version","terraform":"1.11.4"}
{"@level":"info","@message":"terraform_data.x: Plan to create","type":"planned_change","change":{"resource":{"addr":"terraform_data.x"},"action":"create"}}
{"@level":"info","@message":"Plan: 1 to add, 0 to change, 0 to destroy.","type":"change_summary","changes":{"add":1,"change":0,"remove":0,"operation":"plan"}}
{"@level":"info","@message":"terraform_data.x: Creating...","type":"apply_start","hook":{"resource":{"addr":"terraform_data.x"}}}
{"@level":"info","@message":"terraform_data.x (local-exec): stream-provisioner-secret","type":"provision_progress"}
{"@level":"info","@message":"terraform_data.x: Creation complete after 0s [id=stream-id-secret]","type":"apply_complete","hook":{"resource":{"addr":"terraform_data.x"}}}
{"@level":"error","@message":"Error: Invalid value","type":"diagnostic","diagnostic":{"severity":"error","summary":"Invalid value","detail":"stream-detail-secret is not allowed"}}
{"@level":"warn","@message":"Warning: Deprecated","type":"diagnostic","diagnostic":{"severity":"warning","summary":"Deprecated","detail":"x"}}
{"@level":"info","@message":"Apply complete! Resources: 1 added, 0 changed, 0 destroyed.","type":"change_summary","changes":{"add":1,"change":0,"remove":0,"operation":"apply"}}
{"@level":"info","@message":"Outputs: 1","type":"outputs","outputs":{"x":{"sensitive":false,"value":"stream-output-secret"}}}
`
	ps, err := parsePlanStream(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	l := NewRunLog()
	l.stream(ps)
	want := `terraform_data.x: Plan to create
Plan: 1 to add, 0 to change, 0 to destroy.
terraform_data.x: Creating...
terraform_data.x: Creation complete after 0s
Error: Invalid value
Apply complete! Resources: 1 added, 0 changed, 0 destroyed.
Outputs: 1
`
	if diff := cmp.Diff(want, l.Text(nil)); diff != "" {
		t.Errorf("the log of an apply -json stream: -want, +got:\n%s", diff)
	}
}

func TestRunLogText(t *testing.T) {
	cases := map[string]struct {
		reason string
		lines  []string
		err    error
		red    *Redactor
		want   string
	}{
		"Empty": {
			reason: "A run that ran no terraform has no log.",
			want:   "",
		},
		"Redacted": {
			reason: "An address may hold a Secret's value as an instance key: redacted as plan summaries are.",
			lines:  []string{`aws_iam_user.u["hunter2"]: Creating...`},
			red:    NewRedactor("hunter2"),
			want:   "aws_iam_user.u[\"" + Redacted + "\"]: Creating...\n",
		},
		"Failed": {
			reason: "A failed command leaves the first line of its error; the Run's message has the rest.",
			err:    errors.New("exit status 1\n\nError: Invalid value for variable\n\ndetail"),
			want:   "Error: exit status 1\n",
		},
		"Bounded": {
			reason: "Only the last MaxLogLines lines are kept, saying how many were not.",
			lines:  numbered(MaxLogLines + 5),
			want:   "… (5 earlier lines not kept)\n" + strings.Join(numbered(MaxLogLines + 5)[5:], "\n") + "\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := NewRunLog()
			for _, line := range tc.lines {
				l.add(line)
			}
			l.failed(tc.err)
			if diff := cmp.Diff(tc.want, l.Text(tc.red)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// However long its lines, a log fits in MaxLogBytes, its newest lines kept.
func TestRunLogTextFits(t *testing.T) {
	l := NewRunLog()
	long := strings.Repeat("é", MaxLogBytes)
	for range MaxLogLines {
		l.add(long)
	}
	l.add("the last line")
	got := l.Text(nil)
	if len(got) > MaxLogBytes {
		t.Errorf("a log of %d bytes, want at most %d", len(got), MaxLogBytes)
	}
	if !strings.HasSuffix(got, "the last line\n") || !strings.HasPrefix(got, "… (") {
		t.Errorf("the newest line is kept and the cut is said; got %q…%q", got[:40], got[len(got)-40:])
	}
}

func TestRunLogNil(t *testing.T) {
	var l *RunLog
	l.command("plan")
	l.human(humanApply)
	w := l.writer()
	_, _ = w.Write([]byte(humanApply))
	w.flush()
	if got := l.Text(nil); got != "" {
		t.Errorf("a nil log keeps nothing, got %q", got)
	}
}

func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("line %d", i)
	}
	return out
}
