-- POST /api/auth/sign-in/email as the seeded users in turn (each request verifies one argon2 hash).
-- BENCH_EMAILS: file with one seeded address per line; BENCH_PASSWORD: their password.
local requests = {}
local n = 0

function init(args)
  local password = os.getenv("BENCH_PASSWORD")
  local headers = { ["Content-Type"] = "application/json" }
  for email in io.lines(os.getenv("BENCH_EMAILS")) do
    if email ~= "" then
      local body = '{"email":"' .. email .. '","password":"' .. password .. '"}'
      requests[#requests + 1] = wrk.format("POST", "/api/auth/sign-in/email", headers, body)
    end
  end
  assert(#requests > 0, "no e-mails")
  n = math.random(#requests)
end

function request()
  n = n % #requests + 1
  return requests[n]
end
