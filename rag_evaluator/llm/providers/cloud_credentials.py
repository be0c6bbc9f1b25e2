"""What the AWS and Google libraries find for Claude on Bedrock and Vertex, before any request.

The SDK's Bedrock client sends a Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``) when there is
one, else signs with whatever boto3 finds: environment variables, a profile of ``~/.aws``
(SSO included), a cloud machine's role. Its Vertex client uses Google's Application Default
Credentials. These checks ask the same libraries, so a missing, partial or unreadable
credential is one line with its fix before any file is read or anything is paid for. Nothing
is sent, except that boto3 and google-auth ask a cloud machine's metadata service when they
find nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from rag_evaluator.errors import MissingExtraError

BEDROCK_EXTRA = "bedrock"
VERTEX_EXTRA = "vertex"
GOOGLE_CREDENTIALS_VARIABLE = "GOOGLE_APPLICATION_CREDENTIALS"
_CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
# How much of a library's own explanation a message quotes.
_QUOTED = 160

AWS_CREDENTIALS_HINT = (
    "Set AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key), or AWS_ACCESS_KEY_ID with "
    "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (a profile of ~/.aws/config; after aws sso login "
    "for SSO)"
)
AWS_REGION_HINT = (
    "Set AWS_REGION to the region where the account has access to the model (e.g. us-east-1)"
)
GOOGLE_CREDENTIALS_HINT = (
    "Log in with gcloud auth application-default login, or set GOOGLE_APPLICATION_CREDENTIALS "
    "to a service account key file"
)


def _quoted(error: Exception) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= _QUOTED else text[: _QUOTED - 3] + "..."


def bedrock_problem(values: Mapping[str, str]) -> str | None:
    """What keeps Bedrock from being reached with these settings (``values``: the provider
    variables that are set), or ``None``. Raises ``MissingExtraError`` when AWS credentials
    other than a Bedrock API key are to be used without boto3."""
    region = values.get("AWS_REGION") or values.get("AWS_DEFAULT_REGION")
    no_region = f"AWS_REGION or AWS_DEFAULT_REGION is not set for bedrock. {AWS_REGION_HINT}"
    if values.get("AWS_BEARER_TOKEN_BEDROCK"):
        return None if region else no_region
    try:
        import boto3
        from botocore.exceptions import BotoCoreError
    except ImportError as error:
        raise MissingExtraError(
            BEDROCK_EXTRA,
            "Claude on Amazon Bedrock with AWS credentials (a Bedrock API key in "
            "AWS_BEARER_TOKEN_BEDROCK needs nothing more)",
        ) from error
    try:
        session = boto3.Session()
        credentials = session.get_credentials()
    except BotoCoreError as error:
        return f"AWS credentials could not be loaded for bedrock ({_quoted(error)}). " + (
            AWS_CREDENTIALS_HINT
        )
    if credentials is None:
        return (
            "AWS_BEARER_TOKEN_BEDROCK or AWS_ACCESS_KEY_ID or AWS_PROFILE is not set for "
            f"bedrock, and boto3 found no other AWS credentials. {AWS_CREDENTIALS_HINT}"
        )
    return None if region or session.region_name else no_region


def vertex_problem(values: Mapping[str, str]) -> str | None:
    """What keeps Vertex AI from being reached: Google's Application Default Credentials
    cannot be found or read. Raises ``MissingExtraError`` without google-auth."""
    try:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
    except ImportError as error:
        raise MissingExtraError(VERTEX_EXTRA, "Claude on Google Vertex AI") from error
    try:
        google.auth.default(scopes=[_CLOUD_PLATFORM_SCOPE])
    except DefaultCredentialsError as error:
        named = values.get(GOOGLE_CREDENTIALS_VARIABLE)
        if named:
            return (
                f"{GOOGLE_CREDENTIALS_VARIABLE} names {named}, which holds no usable Google "
                f"credentials ({_quoted(error)}). Point it at a service account key file, or "
                "unset it and log in with gcloud auth application-default login"
            )
        return (
            "Google Application Default Credentials were not found for vertex. "
            f"{GOOGLE_CREDENTIALS_HINT}"
        )
    return None
