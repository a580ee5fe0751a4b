"""Loaded first (`-p tests._alias_httpx`): make `httpx` the `httpx2` the anthropic SDK uses.

The SDK is built on httpx2, which respx does not patch; aliasing before anything imports
httpx lets one respx mock intercept the SDK's calls (the SDK's documented recipe).
"""

import httpx2

httpx2.alias_httpx()
