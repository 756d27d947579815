# Prints PyTorch 1.13's learning rates for lakerun's scheduler golden tests (hex floats: bitwise).
import torch
from torch.optim import SGD, Adam
from torch.optim import lr_scheduler as S

def opt(cls=SGD, **kw):
    a = torch.nn.Parameter(torch.zeros(1)); b = torch.nn.Parameter(torch.zeros(1))
    return cls([{'params': [a], 'lr': 0.1}, {'params': [b], 'lr': 0.037}], lr=0.1, **kw)

def run(name, make, steps, metrics=None, momentum=False):
    o = opt(**({'momentum': 0.9} if momentum else {}))
    s = make(o)
    rows = []
    for i in range(steps + 1):
        row = [g['lr'] for g in o.param_groups]
        if momentum: row += [g['momentum'] for g in o.param_groups]
        rows.append(row)
        if i == steps: break
        o.step()
        if metrics is not None: s.step(metrics[i])
        else: s.step()
    print('const std::vector<std::vector<double>> k%s = {' % name)
    for r in rows: print('    {%s},' % ', '.join(x.hex() for x in r))
    print('};')

run('StepLR', lambda o: S.StepLR(o, step_size=3, gamma=0.3), 12)
run('MultiStepLR', lambda o: S.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.7), 12)
run('ExponentialLR', lambda o: S.ExponentialLR(o, gamma=0.93), 12)
run('CosineAnnealingLR', lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.001), 23)
run('LambdaLR', lambda o: S.LambdaLR(o, lambda e: 1.0 / (1 + e) ** 0.5), 12)
run('LinearLR', lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=6), 10)
run('OneCycleLR', lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=17), 16, momentum=True)
run('OneCycleLRThreePhaseLinear', lambda o: S.OneCycleLR(o, max_lr=0.5, total_steps=20, three_phase=True, anneal_strategy='linear', pct_start=0.25), 19, momentum=True)
m = [1.0, 0.9, 0.95, 0.91, 0.9, 0.9, 0.9, 0.89, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.6, 0.6]
run('ReduceLROnPlateau', lambda o: S.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1, min_lr=0.01), len(m), metrics=m)
print('const std::vector<double> kPlateauMetrics = {%s};' % ', '.join(repr(x) for x in m))
m2 = [0.1, 0.2, 0.2, 0.2, 0.2]
run('ReduceLROnPlateauMaxAbs', lambda o: S.ReduceLROnPlateau(o, mode='max', threshold_mode='abs', threshold=0.05, patience=0, factor=0.1), len(m2), metrics=m2)
print('const std::vector<double> kPlateauMaxMetrics = {%s};' % ', '.join(repr(x) for x in m2))
