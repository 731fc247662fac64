-- Follow-up sequences (DESIGN §13): a workspace's named lists of 1–10 steps, each {waitDays, instruction, review},
-- checked by the API (src/schemas/sequences.ts) before they are stored. One default per workspace (a partial unique
-- index); every workspace that exists now gets "Two follow-ups", and a new one gets it when it is made
-- (src/domain/workspaces/workspaces.ts calls createDefaultSequence).
CREATE TABLE sequences (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  name         text NOT NULL,
  steps        jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array' AND jsonb_array_length(steps) BETWEEN 1 AND 10),
  is_default   boolean NOT NULL DEFAULT false,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL
);
CREATE INDEX sequences_workspace ON sequences (workspace_id, created_at, id);
CREATE UNIQUE INDEX sequences_one_default ON sequences (workspace_id) WHERE is_default;

INSERT INTO sequences (id, workspace_id, name, steps, is_default, created_at, updated_at)
SELECT gen_random_uuid(), w.id, 'Two follow-ups',
       '[{"waitDays": 3, "instruction": "A short bump: one new point from the call, and the same ask.", "review": "required"},
         {"waitDays": 5, "instruction": "A last, brief note that leaves the door open.", "review": "required"}]'::jsonb,
       true, now(), now()
FROM workspaces w;
