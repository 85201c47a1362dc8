import sys

from nlivis.cli import main

sys.exit(main())
