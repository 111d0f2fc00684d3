from frogtui.cli import main

raise SystemExit(main())
