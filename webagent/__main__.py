from webagent.cli import main

raise SystemExit(main())
