"""The sticky pull request comment (`comment`) through the REST API; the
token goes only to GITHUB_API_URL's origin."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .workflow import HTTP_TIMEOUT, USER_AGENT, Fail, bool_input, command, env, load_event, log, pull_request, set_output

# The first line of fpcheck's Markdown report (templates/report.md.tera): how
# the sticky comment is found again.
MARKER = "<!-- fpcheck:report -->"
# A second hidden line that tells apart several reports on one pull request.
KEY_PREFIX = "<!-- fpcheck:key="


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port: what must match for a request to carry the
    token."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


class RedirectRefused(urllib.error.URLError):
    """A redirect to another origin, not followed."""


class SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme, host and port. urllib
    copies every header, Authorization included, onto the redirected
    request, so following an API response to another host would hand it the
    token."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if origin(newurl) != origin(req.full_url):
            fp.close()
            raise RedirectRefused(
                f"HTTP {code} redirect from {origin(req.full_url)[1]} to {origin(newurl)[1] or newurl} "
                "not followed: the token is only ever sent to GITHUB_API_URL's host"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


API_OPENER = urllib.request.build_opener(SameOriginRedirects())


@dataclass
class ApiResponse:
    status: int
    data: object
    error: str = ""


def api(method: str, url: str, token: str, body: dict | None = None) -> ApiResponse:
    """One GitHub REST call; never raises for HTTP errors."""
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": USER_AGENT,
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    payload = None
    if body is not None:
        payload = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=payload, headers=headers, method=method)
    try:
        with API_OPENER.open(request, timeout=HTTP_TIMEOUT) as response:
            raw = response.read()
            return ApiResponse(response.status, json.loads(raw) if raw else None)
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:500]
        try:
            detail = json.loads(detail).get("message", detail)
        except (ValueError, AttributeError):
            pass
        return ApiResponse(e.code, None, str(detail))
    except RedirectRefused as e:
        return ApiResponse(0, None, str(e.reason))
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        return ApiResponse(0, None, str(e))


def key_line(key: str) -> str:
    return f"{KEY_PREFIX}{key} -->" if key else ""


def is_report(comment: dict, key: str) -> bool:
    body = comment.get("body") or ""
    if not body.lstrip().startswith(MARKER):
        return False
    return key_line(key) in body if key else KEY_PREFIX not in body


def trusted_author(comment: dict) -> bool:
    """A comment the action may have written: by a bot (the GITHUB_TOKEN
    writes as github-actions[bot]) or by someone with write access (a
    personal token). A drive-by commenter who copies the marker is ignored."""
    user = comment.get("user") or {}
    return (
        user.get("type") == "Bot"
        or user.get("login") == "github-actions[bot]"
        or comment.get("author_association") in ("OWNER", "MEMBER", "COLLABORATOR")
    )


def comment_body(report: str, key: str, run_url: str) -> str:
    """The report, a footer linking the run, and the key line when there is
    a key (the marker stays the first line)."""
    footer = "<sub>Written by the fpcheck action"
    if run_url:
        footer += f" in [run {run_url.rsplit('/', 1)[-1]}]({run_url})"
    footer += "; updated in place on every push.</sub>"
    return f"{report.rstrip(chr(10))}\n\n{footer}\n" + (f"{key_line(key)}\n" if key else "")


def run_url(event: dict) -> str:
    server, repo, run_id = env("GITHUB_SERVER_URL") or "https://github.com", env("GITHUB_REPOSITORY"), env("GITHUB_RUN_ID")
    repo = repo or str((event.get("repository") or {}).get("full_name", ""))
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run_id}" if run_id and repo else ""


def find_sticky(issues: str, number: int, token: str, key: str) -> tuple[dict | None, ApiResponse | None]:
    """Our earlier comment on the pull request, if any (paging through at
    most 5,000 comments), or the failed response."""
    for page in range(1, 51):
        r = api("GET", f"{issues}/{number}/comments?per_page=100&page={page}", token)
        if r.status != 200 or not isinstance(r.data, list):
            return None, r
        found = next((c for c in r.data if is_report(c, key) and trusted_author(c)), None)
        if found or len(r.data) < 100:
            return found, None
    return None, None


def cmd_comment() -> int:
    if not bool_input("INPUT_COMMENT", False):
        log("comment: off")
        return 0
    event = load_event()
    number = (pull_request(event) or {}).get("number") or event.get("number")
    if not isinstance(number, int):
        command("warning", "comment: true, but this run is not for a pull request: no comment written", title="fpcheck")
        return 0
    token = env("INPUT_GITHUB_TOKEN")
    if not token:
        command("warning", "comment: true, but `github-token` is empty: no comment written", title="fpcheck")
        return 0
    body_path = env("FPCHECK_COMMENT_BODY")
    if not body_path or not Path(body_path).is_file():
        raise Fail("no report to comment with: the check step did not run")
    key = env("INPUT_COMMENT_KEY")
    if key and not re.fullmatch(r"[A-Za-z0-9._/-]{1,64}", key):
        raise Fail("input `comment-key` may hold only letters, digits and . _ / - (64 at most)", 2)
    body = comment_body(Path(body_path).read_text(encoding="utf-8"), key, run_url(event))
    repo = env("GITHUB_REPOSITORY") or str((event.get("repository") or {}).get("full_name", ""))
    issues = f"{(env('GITHUB_API_URL') or 'https://api.github.com').rstrip('/')}/repos/{repo}/issues"
    existing, failed = find_sticky(issues, number, token, key)
    if failed:
        return comment_failed("list the pull request's comments", failed)
    if existing:
        r = api("PATCH", f"{issues}/comments/{existing['id']}", token, {"body": body})
    else:
        r = api("POST", f"{issues}/{number}/comments", token, {"body": body})
    if r.status not in (200, 201) or not isinstance(r.data, dict):
        return comment_failed(f"{'update' if existing else 'create'} the comment", r)
    url = str(r.data.get("html_url", ""))
    log(f"comment {'updated' if existing else 'created'}: {url or r.data.get('id')}")
    set_output("comment-url", url)
    set_output("comment-id", str(r.data.get("id", "")))
    return 0


def comment_failed(what: str, r: ApiResponse) -> int:
    hint = ""
    if r.status in (401, 403, 404):
        hint = (
            " The token needs `pull-requests: write` (add it to the job's permissions); "
            "pull requests from forks only get a read-only token, so leave `comment` off for them."
        )
    command(
        "warning",
        f"comment: could not {what} (HTTP {r.status or 'error'}: {r.error}).{hint} The verdict is in the job summary.",
        title="fpcheck",
    )
    return 0
