#!/bin/bash
# record.sh BINARY OUTDIR records, for terraform or tofu, the `plan -json` stream of a few plans of
# terraform_data objects (OUTDIR/<plan>.jsonl) and `show -json` of each saved plan
# (OUTDIR/<plan>.show.json): create, noop, update, replace, delete (count shrinks), tainted,
# forget (a removed block) and preventdestroy (a plan that fails); and what `apply` prints of the
# same plan before it asks whether to apply it (OUTDIR/<plan>.ask.txt, answered "no").
#   terraform/testdata/planstreams/record.sh terraform terraform/testdata/planstreams/terraform
#   terraform/testdata/planstreams/record.sh "$(hack/tofu.sh)" terraform/testdata/planstreams/tofu
set -e
BIN=$1; OUT=$(realpath -m "$2"); mkdir -p "$OUT"
export TF_CLI_CONFIG_FILE=/dev/null
W=$(mktemp -d); cd $W
cat > main.tf <<'TF'
variable "input" { type = string }
variable "trig" { type = string }
variable "n" { type = number }
resource "terraform_data" "one" {
  input = var.input
  triggers_replace = var.trig
}
resource "terraform_data" "many" {
  count = var.n
  input = "x"
}
output "echo" { value = terraform_data.one.output }
TF
$BIN init -input=false >/dev/null
plan() { # name vars...
  name=$1; shift
  rm -f p.tfplan
  set +e
  $BIN plan -input=false -json -detailed-exitcode -out=p.tfplan "$@" > $OUT/$name.jsonl
  code=$?
  echo "$name exit $code"
  set -e
  if [ $code != 1 ]; then $BIN show -json p.tfplan > $OUT/$name.show.json; fi
  echo no | TF_IN_AUTOMATION=1 $BIN apply -no-color -input=true "$@" > $OUT/$name.ask.txt 2>/dev/null || true
}
A="-var input=a -var trig=t1 -var n=2"
plan create $A
$BIN apply -input=false -auto-approve $A >/dev/null
plan noop $A
plan update -var input=b -var trig=t1 -var n=2
plan replace -var input=a -var trig=t2 -var n=2
plan delete -var input=a -var trig=t1 -var n=1
$BIN taint 'terraform_data.many[1]' >/dev/null 2>&1
plan tainted $A
$BIN apply -input=false -auto-approve $A >/dev/null
# forget: an object made, then removed from the configuration by a removed block that keeps it
echo 'resource "terraform_data" "gone" { input = "g" }' >> main.tf
$BIN apply -input=false -auto-approve $A >/dev/null
sed -i '/resource "terraform_data" "gone"/d' main.tf
cat >> main.tf <<'TF'
removed {
  from = terraform_data.gone
  lifecycle { destroy = false }
}
TF
plan forget $A
# prevent_destroy
sed -i '/^removed {/,/^}/d' main.tf
cat >> main.tf <<'TF'
resource "terraform_data" "gone" {
  input = "g2"
  triggers_replace = "z"
  lifecycle { prevent_destroy = true }
}
TF
plan preventdestroy $A
rm -rf "$W"
