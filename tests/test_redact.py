from papergym.redact import MASK, redact, redact_url, register_secret


def test_url_userinfo_is_masked() -> None:
    assert redact_url("http://user:sk-KEY123@host:8000/v1") == f"http://{MASK}@host:8000/v1"
    assert redact("error at https://tok@api.example.com/v1/chat") == (
        f"error at https://{MASK}@api.example.com/v1/chat"
    )


def test_url_without_userinfo_is_unchanged() -> None:
    url = "http://localhost:8000/v1?x=a@b"
    assert redact_url("http://localhost:8000/v1") == "http://localhost:8000/v1"
    assert "localhost:8000" in redact_url(url)


def test_registered_secret_is_masked_wherever_it_appears() -> None:
    register_secret("sk-very-secret-value-42")
    echoed = "401: invalid key sk-very-secret-value-42 for model x"
    assert "sk-very-secret-value-42" not in redact(echoed)
    assert MASK in redact(echoed)


def test_short_values_are_not_registered() -> None:
    register_secret("EMPTY")
    assert redact("EMPTY response") == "EMPTY response"
