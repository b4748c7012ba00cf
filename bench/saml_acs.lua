-- POST /api/auth/sso/saml2/callback/bench-saml: each request posts a different signed SAMLResponse
-- (with its RelayState), form-encoded and cross-site, as the IdP's auto-submitted form does.
-- BENCH_SAML_POOL: file of form bodies, one per line (saml_pool.py); BENCH_THREADS: wrk's -t.
-- Thread k takes lines k, k + T, k + 2T ...: no response is posted twice (that would be a replay).
--
-- Only a 302 to the callback URL (no error parameter) that sets a session cookie counts as a sign-in;
-- anything else is a failure, printed in done() as "Failed responses" (report.py adds them to
-- non-2xx). A thread that has used up its share stops, and done() says so.
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
  thread:set("tid", #threads)
end

local requests = {}
local n = 0
failures = 0
exhausted = 0

function init(args)
  local count = tonumber(os.getenv("BENCH_THREADS") or "1")
  local headers = {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Origin"] = "https://idp.bench.test",
  }
  local path = "/api/auth/sso/saml2/callback/bench-saml"
  local i = 0
  for line in io.lines(os.getenv("BENCH_SAML_POOL")) do
    if line ~= "" then
      i = i + 1
      if (i - 1) % count + 1 == tid then
        -- "<form body>\t<relay_state cookie>": the browser that started the sign-in posts it (I9).
        local body, cookie = line:match("^([^\t]*)\t?(.*)$")
        local own = {}
        for name, value in pairs(headers) do own[name] = value end
        if cookie ~= "" then own["Cookie"] = cookie end
        requests[#requests + 1] = wrk.format("POST", path, own, body)
      end
    end
  end
  assert(#requests > 0, "no SAML responses for thread " .. tid)
end

function request()
  n = n + 1
  if n > #requests then
    exhausted = 1
    wrk.thread:stop()
    n = #requests -- sent only if the loop does not stop at once; its replay is not counted below
  end
  return requests[n]
end

function response(status, headers, body)
  if exhausted == 1 then
    return
  end
  -- wrk keeps the last of repeated headers: the ACS sets the session cookie after deleting relay_state.
  local cookie = headers["Set-Cookie"] or headers["set-cookie"] or ""
  local location = headers["Location"] or headers["location"] or ""
  if status ~= 302 or not cookie:find("session_token=[^;]") or location:find("error=", 1, true) then
    failures = failures + 1
  end
end

function done(summary, latency, requests)
  local failed, stopped = 0, 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("failures")
    stopped = stopped + thread:get("exhausted")
  end
  io.write(string.format("Failed responses: %d\n", failed))
  if stopped > 0 then
    io.write(string.format("SAML pool used up: %d thread(s) stopped early (raise BENCH_SAML_POOL)\n", stopped))
  end
end
