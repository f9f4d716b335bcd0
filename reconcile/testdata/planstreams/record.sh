#!/bin/bash
# rec.sh BIN OUTDIR: records plan -json streams of a few scenarios
set -e
BIN=$1; OUT=$2; mkdir -p $OUT
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
  set +e
  $BIN plan -input=false -json -detailed-exitcode -out=p.tfplan "$@" > $OUT/$name.jsonl 2>$OUT/$name.stderr
  echo "$name exit $?"
  set -e
  $BIN show -json p.tfplan > $OUT/$name.show.json 2>/dev/null || true
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
# forget via removed block
cat >> main.tf <<'TF'
removed {
  from = terraform_data.gone
  lifecycle { destroy = false }
}
resource "terraform_data" "gone" { input = "g" }
TF
# first create "gone", then remove it with removed block
sed -i '/^removed {/,/^}/d' main.tf
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
echo dir $W
