"""Upload backends: give an image toolsight made (a crop) a public URL that outside services can fetch.

The live reverse image search (Serper's `/lens`) and a model server that fetches images by URL need
a public address; toolsight's own image host (`https://img.toolsight.test/…`) has none. A reference
driver that crops and then searches the crop uploads it first (VisBrowse-Bench: a Hugging Face
dataset repository). The user chooses a backend with `TOOLSIGHT_UPLOAD`:

- `hf:OWNER/REPO` — a Hugging Face dataset repository, as the reference: `HfApi.upload_file` (the
  `huggingface_hub` package) with `HF_TOKEN`; the API endpoint is `HF_ENDPOINT` when set; the URL is
  `https://huggingface.co/datasets/OWNER/REPO/resolve/main/crops/<name>.jpg`.
- `s3://BUCKET[/PREFIX]` — an S3-compatible bucket (AWS, MinIO, Cloudflare R2, …): a signed PUT
  (AWS Signature Version 4) with `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` (default
  `us-east-1`) and `AWS_ENDPOINT_URL` for other providers (path-style URLs); the objects must be
  readable by anyone (a bucket policy the user sets).

`TOOLSIGHT_UPLOAD_URL` replaces the public base of the URLs (a CDN, a mirror). Names are
`crops/<first 32 hex digits of the image's SHA-256>.jpg`: the reference's `crops/<uuid4 hex>.jpg`
shape, but the same bytes always get the same URL, so a recorded run replays.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import hmac
import io
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx

from toolsight.web.types import WebCallError, WebError

UPLOAD_VAR = "TOOLSIGHT_UPLOAD"
PUBLIC_BASE_VAR = "TOOLSIGHT_UPLOAD_URL"
HF_PUBLIC = "https://huggingface.co"


def object_name(data: bytes, suffix: str = ".jpg") -> str:
    """`crops/<32 hex>.jpg`: the reference's name shape, content-addressed."""
    return f"crops/{hashlib.sha256(data).hexdigest()[:32]}{suffix}"


class Uploader(ABC):
    """One upload backend: `upload(data)` returns the image's public URL."""

    name = ""

    @abstractmethod
    async def upload(self, data: bytes, suffix: str = ".jpg") -> str: ...

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


class HfUploader(Uploader):
    """A Hugging Face dataset repository (`huggingface_hub`), as the VisBrowse-Bench reference uploads crops."""

    name = "huggingface"

    def __init__(self, repo_id: str, token: str | None, public_base: str = HF_PUBLIC,
                 endpoint: str | None = None) -> None:
        try:
            import huggingface_hub  # noqa: F401
        except ImportError:
            raise WebError(f"{UPLOAD_VAR}=hf:{repo_id} needs the huggingface_hub package: "
                           "pip install 'toolsight[hf]'") from None
        self.repo_id = repo_id
        self.token = token
        self.public_base = public_base.rstrip("/")
        self.endpoint = endpoint

    async def upload(self, data: bytes, suffix: str = ".jpg") -> str:
        from huggingface_hub import HfApi

        path = object_name(data, suffix)

        def run() -> None:
            api = HfApi(endpoint=self.endpoint, token=self.token)
            api.upload_file(path_or_fileobj=io.BytesIO(data), path_in_repo=path, repo_id=self.repo_id,
                            repo_type="dataset", commit_message=f"toolsight crop: {path}")

        try:
            await asyncio.to_thread(run)
        except Exception as exc:  # huggingface_hub raises its own HTTP and validation errors
            raise WebCallError(f"could not upload the image to the Hugging Face dataset {self.repo_id} "
                               f"({type(exc).__name__}: {str(exc)[:300]})") from None
        return f"{self.public_base}/datasets/{self.repo_id}/resolve/main/{path}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "repo": self.repo_id, "endpoint": self.endpoint, "public_base": self.public_base}


# ---- S3 ------------------------------------------------------------------------------------------

def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def sigv4_headers(method: str, url: str, headers: Mapping[str, str], body: bytes, access_key: str, secret: str,
                  region: str, now: dt.datetime, service: str = "s3") -> dict[str, str]:
    """`headers` plus `x-amz-date`, `x-amz-content-sha256` and the AWS Signature Version 4
    `Authorization` header for one request (every header given is signed)."""
    parts = urlsplit(url)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    out = {**headers, "host": parts.netloc, "x-amz-content-sha256": payload, "x-amz-date": stamp}
    lower = {k.lower(): " ".join(str(v).split()) for k, v in out.items()}
    names = sorted(lower)
    canonical_query = "&".join(sorted(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, _, v in
                                      (q.partition("=") for q in parts.query.split("&") if q)))
    canonical = "\n".join([method, quote(unquote(parts.path) or "/", safe="/-_.~"), canonical_query,
                           "".join(f"{n}:{lower[n]}\n" for n in names), ";".join(names), payload])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(("AWS4" + secret).encode(), day), region), service), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, SignedHeaders={';'.join(names)}, "
                            f"Signature={signature}")
    return {k: v for k, v in out.items() if k != "host"}


class S3Uploader(Uploader):
    """An S3-compatible bucket: one signed PUT per image; the URL is the object's public address."""

    name = "s3"

    def __init__(self, bucket: str, prefix: str, access_key: str, secret: str, region: str = "us-east-1",
                 endpoint: str | None = None, public_base: str | None = None, timeout_s: float = 30.0) -> None:
        self.bucket, self.prefix = bucket, prefix.strip("/")
        self.access_key, self.secret, self.region = access_key, secret, region
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.timeout_s = timeout_s
        self.public_base = (public_base.rstrip("/") if public_base else None) or self._object_base()

    def _object_base(self) -> str:
        # path-style on a custom endpoint (MinIO, R2), virtual-hosted style on AWS
        if self.endpoint:
            return f"{self.endpoint}/{self.bucket}"
        return f"https://{self.bucket}.s3.{self.region}.amazonaws.com"

    def _key(self, data: bytes, suffix: str) -> str:
        name = object_name(data, suffix)
        return f"{self.prefix}/{name}" if self.prefix else name

    async def upload(self, data: bytes, suffix: str = ".jpg") -> str:
        key = self._key(data, suffix)
        url = f"{self._object_base()}/{quote(key)}"
        ctype = "image/jpeg" if suffix in (".jpg", ".jpeg") else "image/png" if suffix == ".png" else "application/octet-stream"
        headers = sigv4_headers("PUT", url, {"content-type": ctype}, data, self.access_key, self.secret, self.region,
                                dt.datetime.now(dt.UTC))
        try:
            async with httpx.AsyncClient(timeout=self.timeout_s, trust_env=False) as client:
                resp = await client.put(url, content=data, headers=headers)
        except httpx.HTTPError as exc:
            raise WebCallError(f"could not upload the image to s3://{self.bucket} ({type(exc).__name__})") from None
        if resp.status_code >= 300:
            raise WebCallError(f"could not upload the image to s3://{self.bucket}: HTTP {resp.status_code} "
                               f"{resp.text[:300]}")
        return f"{self.public_base}/{quote(key)}"

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "bucket": self.bucket, "prefix": self.prefix, "endpoint": self.endpoint,
                "region": self.region, "public_base": self.public_base}


def uploader_from_env(env: Mapping[str, str]) -> Uploader | None:
    """The backend `TOOLSIGHT_UPLOAD` names, or None; a malformed value is one WebError naming the fix."""
    spec = (env.get(UPLOAD_VAR) or "").strip()
    if not spec:
        return None
    public = (env.get(PUBLIC_BASE_VAR) or "").strip() or None
    if spec.startswith("hf:"):
        repo = spec[3:].strip().strip("/")
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise WebError(f"{UPLOAD_VAR}={spec!r}: give the dataset repository as hf:OWNER/REPO")
        return HfUploader(repo, env.get("HF_TOKEN") or None, public or HF_PUBLIC, env.get("HF_ENDPOINT") or None)
    if spec.startswith("s3://"):
        bucket, _, prefix = spec[5:].partition("/")
        key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
        if not bucket:
            raise WebError(f"{UPLOAD_VAR}={spec!r}: give the bucket as s3://BUCKET[/PREFIX]")
        if not key or not secret:
            raise WebError(f"{UPLOAD_VAR}={spec!r} needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        return S3Uploader(bucket, prefix, key, secret, env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or
                          "us-east-1", env.get("AWS_ENDPOINT_URL") or None, public)
    raise WebError(f"{UPLOAD_VAR}={spec!r}: use hf:OWNER/REPO (a Hugging Face dataset) or s3://BUCKET[/PREFIX]")
