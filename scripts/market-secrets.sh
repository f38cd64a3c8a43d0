#!/usr/bin/env bash
# Writes one env file per process with only the credentials that process needs (mode 0600), for
# docker-compose.yml (env_file) and for Kubernetes Secrets (kubectl create secret generic
# market-<name> --from-env-file=<dir>/<name>.env):
#   <service>.env  NATS_USER, NATS_PASSWORD (its own bus user), <SERVICE>_DATABASE_URL (its own role
#                  market_<service>); gateway.env also ADMIN_TOKEN; payments.env also STRIPE_SECRET_KEY
#                  and STRIPE_WEBHOOK_SECRET (no other process gets them)
#   nats.env       NATS_PASSWORD_<SERVICE> for every service: the nats-server's environment, which
#                  deploy/nats/auth.conf references
#   db-admin.env   DATABASE_ADMIN_URL and every <SERVICE>_DATABASE_URL: for `npm run db:roles`
#                  (compose's db-roles service, the Kubernetes db-roles Job), which creates each role
#                  market_<service> with the password of its URL
#   postgres.env   the compose PostgreSQL container's superuser (compose only)
# Passwords are random and kept across runs (an existing file's values are reused), so running it
# again is safe; ADMIN_TOKEN and the Stripe keys are taken from the environment when set.
#
# Usage: scripts/market-secrets.sh [DIR]          (DIR default: deploy/compose/secrets, git-ignored)
# Environment: DB_HOST (postgres), DB_PORT (5432), DB_NAME (market), DB_PARAMS (e.g. sslmode=require),
#   DB_ADMIN_URL (default: the compose container's superuser), ADMIN_TOKEN, STRIPE_SECRET_KEY,
#   STRIPE_WEBHOOK_SECRET.
set -euo pipefail
cd "$(dirname "$0")/.."

SERVICES=(gateway agents listings escrow ledger payments support notifications)
DIR=${1:-deploy/compose/secrets}
DB_HOST=${DB_HOST:-postgres}
DB_PORT=${DB_PORT:-5432}
DB_NAME=${DB_NAME:-market}
DB_QUERY=${DB_PARAMS:+?$DB_PARAMS}

umask 077
mkdir -p "$DIR"

# 's' and 48 hex digits: a password must start with a letter, or nats-server reads the value of
# $NATS_PASSWORD_<SERVICE> in auth.conf as a number ("4230e46…") and refuses the file.
random() { printf 's%s' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"; }

# The value of KEY in an existing env file, or nothing.
existing() {
  local file=$1 key=$2
  [ -f "$file" ] || return 0
  sed -n "s/^${key}=//p" "$file" | tail -n 1
}

keep_or_new() {
  local value
  value=$(existing "$1" "$2")
  [ -n "$value" ] && printf '%s' "$value" || random
}

upper() { printf '%s' "$1" | tr '[:lower:]' '[:upper:]'; }

write() {
  local file=$1
  shift
  local tmp="$file.tmp.$$"
  printf '%s\n' "# written by scripts/market-secrets.sh — secret, do not commit" "$@" >"$tmp"
  chmod 600 "$tmp"
  mv "$tmp" "$file"
}

# The compose PostgreSQL container's superuser (the admin URL's password).
pg_password=$(keep_or_new "$DIR/postgres.env" POSTGRES_PASSWORD)
write "$DIR/postgres.env" "POSTGRES_USER=market" "POSTGRES_PASSWORD=$pg_password" "POSTGRES_DB=$DB_NAME"
admin_url=${DB_ADMIN_URL:-postgres://market:$pg_password@$DB_HOST:$DB_PORT/$DB_NAME$DB_QUERY}

nats_lines=()
db_lines=("DATABASE_ADMIN_URL=$admin_url")
for s in "${SERVICES[@]}"; do
  S=$(upper "$s")
  file="$DIR/$s.env"
  nats_password=$(keep_or_new "$file" NATS_PASSWORD)
  db_url=$(existing "$file" "${S}_DATABASE_URL")
  db_password=$(printf '%s' "$db_url" | sed -n 's|^postgres://[^:]*:\([^@]*\)@.*|\1|p')
  [ -n "$db_password" ] || db_password=$(random)
  db_url="postgres://market_$s:$db_password@$DB_HOST:$DB_PORT/$DB_NAME$DB_QUERY"
  lines=("NATS_USER=$s" "NATS_PASSWORD=$nats_password" "${S}_DATABASE_URL=$db_url")
  case $s in
    gateway)
      token=${ADMIN_TOKEN:-$(keep_or_new "$file" ADMIN_TOKEN)}
      lines+=("ADMIN_TOKEN=$token")
      ;;
    payments)
      # Unset: the sandbox checkout (refused when NODE_ENV=production).
      lines+=("STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY:-$(existing "$file" STRIPE_SECRET_KEY)}")
      lines+=("STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET:-$(existing "$file" STRIPE_WEBHOOK_SECRET)}")
      ;;
  esac
  write "$file" "${lines[@]}"
  nats_lines+=("NATS_PASSWORD_$S=$nats_password")
  db_lines+=("${S}_DATABASE_URL=$db_url")
done
write "$DIR/nats.env" "${nats_lines[@]}"
write "$DIR/db-admin.env" "${db_lines[@]}"

echo "secrets written to $DIR (one env file per process, mode 0600)"
