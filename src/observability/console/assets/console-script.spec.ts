import { CONSOLE_SCRIPT } from './console-script';
import { consolePage } from './console-page';

describe('the console script and page', () => {
  it('the script with its admission part spliced in parses as one script', () => {
    expect(() => new Function(CONSOLE_SCRIPT)).not.toThrow();
    expect(CONSOLE_SCRIPT).toContain('function renderAdmission(admission)');
    expect(CONSOLE_SCRIPT.indexOf('function renderAdmission')).toBeLessThan(CONSOLE_SCRIPT.indexOf('renderAdmission(snapshot.admission)'));
  });

  it('the page has every element the admission part fills (spec 09 §7: tenants, cost in use, effective limits)', () => {
    const page = consolePage({ consoleBase: '/console', apiBase: '' });
    const ids = [...CONSOLE_SCRIPT.matchAll(/byId\('([a-z-]+)'\)|fillTable\('([a-z-]+)', '([a-z-]+)'/g)].flatMap((match) => match.slice(1).filter(Boolean));
    for (const id of ['admission-cost', 'admission-tenants', 'admission-tenants-empty', 'admission-tenants-panel']) expect(ids).toContain(id);
    for (const id of new Set(ids.filter((id) => id.startsWith('admission')))) expect(page).toContain(`id="${id}"`);
    expect(page).toContain('<th>effective limit</th>');
  });
});
