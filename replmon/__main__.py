from replmon.cli import main

raise SystemExit(main())
