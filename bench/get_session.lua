-- GET /api/auth/get-session with a seeded session cookie, a different one on each request.
-- BENCH_COOKIES: file with one Cookie header value per line (written by seed.py).
local requests = {}
local n = 0

function init(args)
  local path = os.getenv("BENCH_COOKIES")
  for line in io.lines(path) do
    if line ~= "" then
      requests[#requests + 1] = wrk.format("GET", "/api/auth/get-session", { ["Cookie"] = line })
    end
  end
  assert(#requests > 0, "no cookies in " .. path)
  n = math.random(#requests)
end

function request()
  n = n % #requests + 1
  return requests[n]
end
