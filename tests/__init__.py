"""The test suite: a package, so that pytest imports each test module once, under the name other test modules
import it by (`from tests.test_app_pages import open_app`), instead of a second time beside its own basename."""
